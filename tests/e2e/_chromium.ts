/**
 * Debian's Chromium, headless, with a throwaway profile, for the browser
 * end-to-end scripts (they run as child processes: puppeteer reads arbitrary
 * environment variables and spawns Chromium, permissions the test task does
 * not grant). No request is ever intercepted: the server judges exactly what
 * Chromium sends.
 *
 * @module
 */
import puppeteer, { type Browser } from "puppeteer-core";

const CHROMIUM = "/usr/bin/chromium";

/** Runs `fn` with a fresh headless browser, then closes it and removes its profile. */
export async function withChromium<T>(fn: (browser: Browser) => Promise<T>): Promise<T> {
  const profile = await Deno.makeTempDir({ prefix: "htmcp-chromium-" });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile}`,
    ],
  });
  try {
    return await fn(browser);
  } finally {
    await browser.close();
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}
