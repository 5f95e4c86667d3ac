// The page: sign in with the admin token, then refresh the live view every
// second, and say plainly when the token is refused or the admin API is gone.
import { createApi, SIGNED_OUT, UNREACHABLE } from './api.js';
import { clearHistory, pickedRange, renderHistory } from './history.js';
import { clearOverview, renderOverview } from './live.js';
import { setupKeys } from './keys.js';
import { onDelete, setupRules } from './rules.js';
import { isForbidden } from './role.js';
import { setupTeam } from './team.js';
import { setupPlans } from './plans.js';

const REFRESH_MS = 1000;
/** The history moves in 10-s buckets: every 5 s is enough. */
const HISTORY_MS = 5000;
const RETRY_MS = 2000;
const api = createApi();
const alertBox = document.getElementById('alert');
let timer;
let historyTimer;
let wasDown = false;

function showAlert(message) {
  alertBox.textContent = message;
  alertBox.hidden = false;
}

function hideAlert() {
  alertBox.hidden = true;
  alertBox.textContent = '';
}

/** Every failed call ends here: the page says what happened instead of going blank. */
function report(error) {
  if (error.code === SIGNED_OUT) return;
  if (isForbidden(error)) {
    showAlert(`Not allowed: ${error.message}.`);
  } else if (error.code === UNREACHABLE) {
    wasDown = true;
    showAlert(error.message);
  } else if (error.status === 401 || error.status === 403) {
    signOut(`Signed out: the admin API no longer accepts this token (${error.message}).`);
  } else if (error.status >= 500) {
    showAlert(`The admin API failed: ${error.message}`);
  }
}

const rules = setupRules(api, report);
onDelete(api, report);
const keys = setupKeys(api, report);
const team = setupTeam(api, report);
const plans = setupPlans(api, report);

async function refresh() {
  try {
    const overview = await api.call('GET', '/ui/api/overview');
    renderOverview(overview);
    rules.setOverview(overview);
    if (wasDown) {
      wasDown = false;
      hideAlert();
      await Promise.all([rules.load(), keys.load(), team.load(), plans.load()]);
    }
    schedule(REFRESH_MS);
  } catch (error) {
    report(error);
    if (api.hasToken()) schedule(error.code === UNREACHABLE ? RETRY_MS : REFRESH_MS);
  }
}

async function refreshHistory() {
  clearTimeout(historyTimer);
  try {
    renderHistory(await api.call('GET', `/ui/api/history?range=${pickedRange()}`));
  } catch (error) {
    report(error);
  }
  if (api.hasToken()) historyTimer = setTimeout(refreshHistory, HISTORY_MS);
}

document.getElementById('range').addEventListener('change', () => void refreshHistory());

function schedule(ms) {
  clearTimeout(timer);
  timer = setTimeout(refresh, ms);
}

function signOut(message) {
  clearTimeout(timer);
  clearTimeout(historyTimer);
  api.setToken('');
  clearHistory();
  // Nothing the token showed stays in the page: a clear key just created least of all.
  clearOverview();
  rules.clear();
  keys.clear();
  team.clear();
  plans.clear();
  document.getElementById('signed-in').hidden = true;
  document.getElementById('sign-out').hidden = true;
  document.getElementById('sign-in-section').hidden = false;
  document.getElementById('sign-in-error').textContent = message ?? '';
  document.getElementById('token').focus();
}

document.getElementById('sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  const error = document.getElementById('sign-in-error');
  const token = document.getElementById('token').value.trim();
  error.textContent = '';
  if (token === '') {
    error.textContent = 'Enter the admin token (SLUICE_ADMIN_TOKEN).';
    return;
  }
  api.setToken(token);
  try {
    const overview = await api.call('GET', '/ui/api/overview');
    document.getElementById('token').value = '';
    document.getElementById('sign-in-section').hidden = true;
    document.getElementById('signed-in').hidden = false;
    document.getElementById('sign-out').hidden = false;
    hideAlert();
    renderOverview(overview);
    rules.setOverview(overview);
    await Promise.all([rules.load(), keys.load(), team.load(), plans.load(), refreshHistory()]);
    schedule(REFRESH_MS);
  } catch (failure) {
    api.setToken('');
    error.textContent = failure.status === 401 ? `Sign-in refused: ${failure.message}. Check SLUICE_ADMIN_TOKEN.` : `Sign-in failed: ${failure.message}`;
  }
});

document.getElementById('sign-out').addEventListener('click', () => signOut('Signed out.'));
