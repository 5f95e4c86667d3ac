// The page's navigation, built from the sections present: each <section> names
// its view in data-nav (the first of a view with data-nav-label names the link),
// so a new section joins a view, or adds one, with its attributes alone. The
// view lives in the address (#/tenants), so a reload or the back button lands
// on it; only its sections show, and only its hooks run: a hidden view loads
// and polls nothing.
import { element } from './api.js';

export const DEFAULT_VIEW = 'overview';
const HASH = /^#\/([a-z][a-z0-9-]*)$/;

/** `root`: where the sections are; `nav`: the <nav> the links go in; `latest()`: the last overview, drawn into a view as it shows. */
export function setupNav({ root, nav, latest }) {
  const views = new Map();
  // A section that names no view gets one of its own (its id without "-section", its heading as the link) rather than showing on every view.
  for (const section of root.querySelectorAll(':scope > section:not([data-nav])')) {
    section.dataset.nav = (section.id || 'more').replace(/-section$/, '').toLowerCase();
    section.dataset.navLabel ??= section.querySelector('h2')?.textContent ?? section.dataset.nav;
  }
  for (const section of root.querySelectorAll('section[data-nav]')) {
    const name = section.dataset.nav;
    if (!views.has(name)) views.set(name, { label: undefined, sections: [], hooks: [] });
    const view = views.get(name);
    view.sections.push(section);
    view.label ??= section.dataset.navLabel;
  }
  const list = element('ul');
  for (const [name, view] of views) {
    const link = element('a', view.label ?? name, { href: `#/${name}`, 'data-nav-link': name });
    const item = element('li');
    item.append(link);
    list.append(item);
  }
  nav.replaceChildren(list);
  let active;
  let running = false;

  const fromHash = () => {
    const name = HASH.exec(location.hash)?.[1];
    return name && views.has(name) ? name : DEFAULT_VIEW;
  };
  const run = (name, hook, ...args) => {
    for (const hooks of views.get(name)?.hooks ?? []) void hooks[hook]?.(...args);
  };
  const show = (name) => {
    if (active && active !== name) run(active, 'leave');
    active = name;
    for (const [other, view] of views) for (const section of view.sections) section.hidden = other !== name;
    for (const link of nav.querySelectorAll('a[data-nav-link]')) {
      if (link.dataset.navLink === name) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    document.title = `Sluice: ${views.get(name).label ?? name}`;
    run(name, 'enter');
    const overview = latest?.();
    if (overview) run(name, 'live', overview);
  };
  window.addEventListener('hashchange', () => {
    if (!running) return;
    show(fromHash());
    // Followed from a link or the back button: the view's heading takes the focus, for keyboards and screen readers.
    const heading = views.get(active).sections[0].querySelector('h2');
    heading?.setAttribute('tabindex', '-1');
    heading?.focus();
  });

  return {
    /** `hooks`: enter() when the view shows, leave() when another does, live(overview) on each poll while shown. */
    on(name, hooks) {
      if (!views.has(name)) throw new Error(`no section declares the view ${name} (data-nav)`);
      views.get(name).hooks.push(hooks);
    },
    /** Signed in: the view the address names. */
    start() {
      running = true;
      show(fromHash());
    },
    /** Signed out: the shown view stops (its leave hooks run). */
    stop() {
      if (active) run(active, 'leave');
      running = false;
      active = undefined;
    },
    /** The shown view enters again (its data reloaded), e.g. once the admin API is back. */
    reenter() {
      if (active) run(active, 'enter');
    },
    live(overview) {
      if (active) run(active, 'live', overview);
    },
    active: () => active,
  };
}
