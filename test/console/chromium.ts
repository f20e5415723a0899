/**
 * Debian's Chromium (`apt-get install -y chromium`; `.ci/run` installs it when missing), driven by playwright-core:
 * no browser is downloaded. Missing, the browser tests are skipped, except under CI=true or
 * OMNIGATE_REQUIRE_CHROMIUM=1 (set by `.ci/run`), where they fail.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.OMNIGATE_CHROMIUM ?? '/usr/bin/chromium';
export const chromiumPresent = existsSync(CHROMIUM_PATH);
export const requireChromium = process.env.CI === 'true' || process.env.OMNIGATE_REQUIRE_CHROMIUM === '1';

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // Root in a container has no user namespace for Chromium's sandbox; the pages are our own, on loopback.
    args: ['--no-sandbox', '--autoplay-policy=no-user-gesture-required', '--mute-audio'],
  });
}
