// The page: sign in with the admin token, then show the view the address names
// (nav.js), refresh it every second, and say plainly when the token is refused
// or the admin API is gone. The overview is polled whatever the view (the
// banner and the scope line on every view come from it) but drawn only into
// the view shown; the history, rules, overrides, keys, tokens and the audit
// log are asked for only while their view shows.
import { createApi, SIGNED_OUT, UNREACHABLE } from './api.js';
import { clearHistory, pickedRange, renderHistory } from './history.js';
import { renderBanner } from './instances.js';
import { setupKeys } from './keys.js';
import { setupBlocks } from './blocks.js';
import { clearOverview, renderCharts, renderInstanceView, renderScope, renderTop } from './live.js';
import { setupNav } from './nav.js';
import { isForbidden } from './role.js';
import { onDelete, setupRules } from './rules.js';
import { renderSummary } from './summary.js';
import { setupTeam } from './team.js';
import { setupPlans } from './plans.js';
import { setupLists } from './lists.js';
import { setupNotifications } from './notifications.js';

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
const blocks = setupBlocks(api, report);
document.getElementById('blocks-refresh').addEventListener('click', () => void blocks.load());
const team = setupTeam(api, report);
const plans = setupPlans(api, report);
const lists = setupLists(api, report);
const notifications = setupNotifications(api, report);
/** The last overview polled: a view that shows draws it at once, not a second later. */
let last;
const nav = setupNav({ root: document.getElementById('signed-in'), nav: document.getElementById('nav'), latest: () => last });
nav.on('overview', { live: renderSummary });
nav.on('routes', { enter: refreshHistory, leave: () => clearTimeout(historyTimer), live: renderCharts });
nav.on('tenants', { enter: blocks.load, live: (overview) => renderTop(overview.top) });
nav.on('instances', { live: renderInstanceView });
nav.on('rules', { enter: () => Promise.all([rules.load(), team.overrides.load(), plans.load(), lists.load()]), live: rules.setOverview });
nav.on('keys', { enter: () => Promise.all([keys.load(), team.tokens.load()]) });
nav.on('audit', { enter: team.audit.load });
nav.on('notifications', { enter: notifications.load, leave: notifications.leave });

/** Drawn whatever the view: the scope line, the degraded banner, then the view's own parts. */
function draw(overview) {
  last = overview;
  renderScope(overview);
  renderBanner(overview.instances);
  nav.live(overview);
}

async function refresh() {
  try {
    draw(await api.call('GET', '/ui/api/overview'));
    if (wasDown) {
      wasDown = false;
      hideAlert();
      nav.reenter();
    }
    schedule(REFRESH_MS);
  } catch (error) {
    report(error);
    if (api.hasToken()) schedule(error.code === UNREACHABLE ? RETRY_MS : REFRESH_MS);
  }
}

/** While the routes view shows: the history every 5 s (and at once when the range changes). */
async function refreshHistory() {
  clearTimeout(historyTimer);
  try {
    const history = await api.call('GET', `/ui/api/history?range=${pickedRange()}`);
    if (nav.active() === 'routes') renderHistory(history);
  } catch (error) {
    report(error);
  }
  if (api.hasToken() && nav.active() === 'routes') historyTimer = setTimeout(refreshHistory, HISTORY_MS);
}

document.getElementById('range').addEventListener('change', () => void refreshHistory());

function schedule(ms) {
  clearTimeout(timer);
  timer = setTimeout(refresh, ms);
}

function signOut(message) {
  clearTimeout(timer);
  nav.stop();
  clearTimeout(historyTimer);
  api.setToken('');
  last = undefined;
  clearHistory();
  // Nothing the token showed stays in the page: a clear key just created least of all.
  clearOverview();
  rules.clear();
  keys.clear();
  blocks.clear();
  team.clear();
  plans.clear();
  lists.clear();
  notifications.clear();
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
    // The role first: it decides what the view shows and asks for (tokens: admin only).
    await team.loadRole();
    draw(overview);
    nav.start();
    schedule(REFRESH_MS);
  } catch (failure) {
    api.setToken('');
    error.textContent = failure.status === 401 ? `Sign-in refused: ${failure.message}. Check SLUICE_ADMIN_TOKEN.` : `Sign-in failed: ${failure.message}`;
  }
});

document.getElementById('sign-out').addEventListener('click', () => signOut('Signed out.'));
