// Blocked keys: the keys a limit's penalty box (`penalty:`) refuses now, across
// the cluster, with the time left (GET /blocks, ids hashed as the API shows
// them); a write token can lift one (DELETE /blocks/{id}, audited).
import { element, row } from './api.js';

/** `1h 02m 03s`, `4m 05s`, `6s`: rounded up to the second. */
export function formatLeft(ms) {
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n) => String(n).padStart(2, '0');
  if (h > 0) return `${h}h ${pad(m)}m ${pad(s)}s`;
  if (m > 0) return `${m}m ${pad(s)}s`;
  return `${s}s`;
}

export function setupBlocks(api, report) {
  const tbody = document.querySelector('#blocks tbody');
  tbody.addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-lift]');
    if (!button) return;
    const id = button.dataset.lift;
    if (!window.confirm(`Lift block ${id}? The key is let in again at once, and its offence level is forgiven.`)) return;
    try {
      await api.call('DELETE', `/blocks/${encodeURIComponent(id)}`);
      await loadBlocks(api, report);
    } catch (failure) {
      report(failure);
      await loadBlocks(api, report);
    }
  });
  return {
    load: () => loadBlocks(api, report),
    clear: () => tbody.replaceChildren(),
  };
}

async function loadBlocks(api, report) {
  try {
    const { blocks } = await api.call('GET', '/blocks');
    const tbody = document.querySelector('#blocks tbody');
    if (blocks.length === 0) {
      tbody.replaceChildren(row(['no key is blocked', '', '', '', '', '']));
      return;
    }
    tbody.replaceChildren(...blocks.map(blockRow));
  } catch (failure) {
    report(failure);
  }
}

function blockRow(block) {
  const lift = element('button', 'Lift', { type: 'button', 'data-lift': block.id, 'aria-label': `Lift block ${block.id}` });
  const tr = row([block.id, block.tenant ?? '—', block.limit ?? '—', formatLeft(block.remainingMs), new Date(block.blockedUntilMs).toISOString(), lift]);
  tr.dataset.block = block.id;
  return tr;
}
