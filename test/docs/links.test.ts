// The README and docs/ link to each other and to files of the repository: every
// relative link must point at a file that exists and, for a markdown file, at a
// heading it has; every repository path named in backticks must exist (the
// architecture page names a file per step); and the README's map lists every
// page under docs/.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** The text outside fenced code blocks and inline code: links and headings there are not markdown. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Relative link targets of a page: `[text](target)`, without external URLs. */
function linksOf(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map(([, target]) => target!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  const text = readFileSync(join(ROOT, page), 'utf8');
  for (const link of linksOf(text)) {
    const [path = '', anchor] = link.split('#', 2);
    const target = path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURI(path));
    if (!existsSync(target)) {
      broken.push(`${link}: no file ${relative(ROOT, target)}`);
      continue;
    }
    if (anchor === undefined || statSync(target).isDirectory() || !target.endsWith('.md')) continue;
    if (!anchorsOf(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${link}: no heading #${anchor} in ${relative(ROOT, target)}`);
  }
  return broken;
}

describe('documentation links', () => {
  for (const page of PAGES) {
    it(`every relative link in ${page} resolves to a file and heading`, () => {
      assert.deepEqual(brokenLinks(page), []);
    });
  }

  it('every repository path the pages name in backticks exists', () => {
    const missing: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const [, path] of text.matchAll(/`((?:src|test|bench|migrations|examples|scripts)\/[^`\s<*]+)`/g)) {
        if (!existsSync(join(ROOT, path!))) missing.push(`${page}: ${path}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('the README links every page under docs/', () => {
    const linked = new Set(linksOf(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((link) => link.split('#')[0]));
    assert.deepEqual(PAGES.filter((page) => page.startsWith('docs/') && !linked.has(page)), []);
  });

  it('finds anchors the way GitHub builds them', () => {
    const anchors = anchorsOf('# Admin API and CLI\n## Redis slow or down\n```sh\n# not a heading\n```\n## `resilience:` section\n## Faults\n## Faults\n');
    assert.deepEqual([...anchors], ['admin-api-and-cli', 'redis-slow-or-down', 'resilience-section', 'faults', 'faults-1']);
  });
});
