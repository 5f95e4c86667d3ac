// Who is signed in, and what the page lets them do: a `read` token sees every
// section but no edit action (hidden by app.css under body[data-role="read"]);
// the admin API refuses its writes all the same (403).
export async function loadRole(api) {
  const who = await api.call('GET', '/whoami');
  document.body.dataset.role = who.role;
  const label = document.getElementById('who');
  label.textContent = `Signed in as ${who.name} (${who.role}${who.role === 'read' ? ': view only' : ''})`;
  label.hidden = false;
  return who;
}

export function clearRole() {
  delete document.body.dataset.role;
  const label = document.getElementById('who');
  label.textContent = '';
  label.hidden = true;
}

/** A write refused for the token's role: said plainly, without signing out. */
export function isForbidden(error) {
  return error.status === 403 && error.code === 'ERR_FORBIDDEN';
}
