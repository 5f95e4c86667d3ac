// The limits' threshold events (docs/notifications.md): how many wait, and the
// last ones sent, failed or dropped, newest first (GET /notifications), asked
// for again every few seconds while the view shows.
import { element, row } from './api.js';

const REFRESH_MS = 5000;
let timer;

export function setupNotifications(api, report) {
  const load = async () => {
    clearTimeout(timer);
    try {
      render(await api.call('GET', '/notifications'));
    } catch (error) {
      report(error);
    }
    timer = setTimeout(load, REFRESH_MS);
  };
  return {
    load,
    leave: () => clearTimeout(timer),
    clear() {
      clearTimeout(timer);
      document.querySelector('#notifications tbody').replaceChildren();
      document.getElementById('notifications-pending').textContent = '';
    },
  };
}

function render(view) {
  document.getElementById('notifications-pending').textContent = `${view.pending} waiting to be sent or retried on this instance`;
  const rows = view.recent.map((record) => {
    const outcome = element('span', record.outcome, { class: record.outcome === 'sent' ? 'ok' : 'failed' });
    const tr = row([new Date(record.at).toISOString().replace('T', ' ').slice(0, 19), record.tenant ?? '—', record.limit, record.route ?? '—', `${Math.round(record.threshold * 100)} %`, outcome, record.attempts, record.detail ?? '']);
    tr.dataset.outcome = record.outcome;
    return tr;
  });
  document.querySelector('#notifications tbody').replaceChildren(...(rows.length === 0 ? [row(['no notification yet', '', '', '', '', '', '', ''])] : rows));
}
