// Calls to the admin API with the token as a header (no cookie), and one error
// shape for the page: the API's own { code, field, message }, or "unreachable".

export class ApiError extends Error {
  constructor(status, code, field, message) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

export const UNREACHABLE = 'ERR_UNREACHABLE';
/** A call whose token was dropped (signed out) or changed while it was out: its answer belongs to nobody now. */
export const SIGNED_OUT = 'ERR_SIGNED_OUT';

export function createApi() {
  let token = '';
  return {
    setToken(next) {
      token = next;
    },
    hasToken() {
      return token !== '';
    },
    async call(method, path, body) {
      const sent = token;
      const headers = { authorization: `Bearer ${sent}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      let response;
      try {
        response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
      } catch {
        throw new ApiError(0, UNREACHABLE, undefined, 'The admin API is not answering: the Sluice instance serving this page may be stopped or restarting. Retrying every 2 seconds.');
      }
      const text = await response.text();
      // An answer that arrives after sign-out must not put back what signing out cleared.
      if (token !== sent) throw new ApiError(0, SIGNED_OUT, undefined, 'signed out while the call was out');
      if (response.status === 204) return undefined;
      let data;
      try {
        data = text ? JSON.parse(text) : undefined;
      } catch {
        data = undefined;
      }
      if (!response.ok) {
        const error = data?.error;
        throw new ApiError(response.status, error?.code ?? 'ERR_HTTP', error?.field, error?.message ?? `the admin API answered HTTP ${response.status}`);
      }
      return data;
    },
  };
}

/** A table row of text cells (never HTML: every value is set as text). */
export function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = String(cell);
    if (typeof cell === 'number') td.className = 'num';
    tr.append(td);
  }
  return tr;
}

export function element(tag, text, attributes = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}
