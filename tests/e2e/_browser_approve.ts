/**
 * The operator's browser, for the browser end-to-end test: headless Chromium
 * driven by puppeteer-core opens an authorization URL, types the admin PIN and
 * clicks Approve, exactly as a person would. No request is intercepted or
 * rewritten: whatever headers Chromium sends are what the server judges.
 *
 * Runs as a child process (it needs permissions the test task does not grant:
 * puppeteer reads arbitrary environment variables and spawns Chromium).
 *
 * Usage: deno run -A _browser_approve.ts AUTH_URL PIN SCREENSHOT.png CALLBACK_PREFIX
 * Prints one JSON line: { finalUrl, approvalStatus, approvalOrigin, screenshot }.
 *
 * @module
 */
import { withChromium } from "./_chromium.ts";

const [authUrl, pin, screenshot, callbackPrefix] = Deno.args;
if (
  authUrl === undefined || pin === undefined || screenshot === undefined ||
  callbackPrefix === undefined
) {
  console.error("usage: _browser_approve.ts AUTH_URL PIN SCREENSHOT CALLBACK_PREFIX");
  Deno.exit(2);
}

await withChromium(async (browser) => {
  const page = await browser.newPage();
  await page.setViewport({ width: 900, height: 1000 });
  const opened = await page.goto(authUrl, { waitUntil: "load" });
  if (opened === null || opened.status() !== 200) {
    throw new Error(`The approval page answered ${opened?.status()}: ${await page.content()}`);
  }
  if (await page.$('input[name="pin"]') === null) {
    throw new Error(
      `The approval page has no PIN field (at ${page.url()}): ${await page.content()}`,
    );
  }
  await page.type('input[name="pin"]', pin);
  await page.screenshot({ path: screenshot, fullPage: true });
  // The form post answers 303 to the client's callback; record that answer.
  let approvalStatus: number | null = null;
  // The Origin Chromium chose to send (observed, never changed).
  let approvalOrigin: string | null = null;
  page.on("response", (response) => {
    const request = response.request();
    if (request.method() === "POST" && new URL(response.url()).pathname === "/authorize") {
      approvalStatus = response.status();
      approvalOrigin = request.headers()["origin"] ?? null;
    }
  });
  await Promise.all([
    page.waitForNavigation({ waitUntil: "load" }),
    page.click('button[value="approve"]'),
  ]);
  const finalUrl = page.url();
  if (!finalUrl.startsWith(callbackPrefix)) {
    throw new Error(
      `Approval did not reach the callback (status ${approvalStatus}) but ${finalUrl}: ${await page
        .content()}`,
    );
  }
  console.log(JSON.stringify({ finalUrl, approvalStatus, approvalOrigin, screenshot }));
});
