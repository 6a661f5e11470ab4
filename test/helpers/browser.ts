// Headless Debian Chromium driven by playwright-core (TOOLCHAIN.md §6). A missing browser fails the test with
// the install hint; it never skips (.ci/run installs chromium).
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export async function launchChromium(forWhat: string): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${forWhat} needs Chromium at ${CHROMIUM}: install it (apt-get install -y chromium; .ci/run does this).`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
