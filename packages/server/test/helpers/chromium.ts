// Real Chromium for the browser suites (hosted pages, the SDK, the demo shop): Debian's build at
// /usr/bin/chromium (CHROMIUM_PATH to use another), driven by playwright-core. .ci/run installs the
// package when it is missing; without it the browser suites fail and say why, they are not skipped.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * What axe-core finds wrong on the page as it is now, against WCAG 2.1 A and AA and axe's best practices:
 * one line a rule, with the elements it names.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    interface Violation {
      id: string;
      help: string;
      nodes: { target: string[] }[];
    }
    const axe = (
      window as unknown as { axe: { run(c: Document, o: object): Promise<{ violations: Violation[] }> } }
    ).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations.map(
      (v) => `${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    );
  });
}

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** One headless Chromium for a test file; close it in the file's after(). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not at ${CHROMIUM_PATH}: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH.`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/** A loopback port free right now, for a server whose public URL must be known before it listens. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject()));
    });
  });
}

/** Where screenshots and other artifacts of the browser suites go (kept by CI; ignored by git). */
export function artifactDir(...parts: string[]): string {
  const dir = join(process.env.TEST_ARTIFACTS_DIR ?? 'test-artifacts', ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}
