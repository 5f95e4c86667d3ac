// Debian's Chromium driven by playwright-core, as the tests of the operator's
// page use it: headless, a fresh profile in a temp dir removed afterwards, and
// screenshots saved under test-output/dashboard/ (gitignored).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const OUTPUT_DIR = fileURLToPath(new URL('../../test-output/dashboard/', import.meta.url));

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Messages the page logged, CSP violations included. */
  console: string[];
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** `args`: more Chromium flags (e.g. `--ignore-certificate-errors` for a test's own CA). */
export async function launchBrowser(args: string[] = []): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
  mkdirSync(OUTPUT_DIR, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', ...args],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const messages: string[] = [];
  page.on('console', (message) => messages.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => messages.push(`pageerror: ${error.message}`));
  page.on('dialog', (dialog) => void dialog.accept());
  return {
    context,
    page,
    console: messages,
    shot: async (name) => {
      await page.screenshot({ path: join(OUTPUT_DIR, `${name}.png`), fullPage: true });
    },
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Opens a view of the operator's page by its navigation link, as a person would, and waits until it shows. */
export async function openView(page: Page, view: string): Promise<void> {
  await page.locator(`#nav a[data-nav-link="${view}"]`).click();
  await page.locator(`section[data-nav="${view}"]`).first().waitFor({ state: 'visible', timeout: 3000 });
}
