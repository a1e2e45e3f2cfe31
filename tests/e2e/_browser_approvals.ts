/**
 * The operator's browser for the approvals-page end-to-end test: headless
 * Chromium driven by puppeteer-core opens htmcp's `/approvals`, types the
 * admin PIN, asks for the pending approvals, checks that the one it was told
 * about is shown with its argv, and clicks Allow or Deny on it, as a person
 * would. No request is intercepted or rewritten: the server judges exactly
 * the headers Chromium sends.
 *
 * Runs as a child process (puppeteer reads arbitrary environment variables
 * and spawns Chromium: permissions the test task does not grant).
 *
 * Usage: deno run -A _browser_approvals.ts PAGE_URL PIN APPROVAL_ID allow|deny ARGV_JSON SCREENSHOT
 * Prints one JSON line: { posts: [{ status, origin, fetchSite }], outcome, screenshot }.
 *
 * @module
 */
import { withChromium } from "./_chromium.ts";

const [pageUrl, pin, approvalId, answer, argvJson, screenshot] = Deno.args;
if (
  pageUrl === undefined || pin === undefined || approvalId === undefined ||
  (answer !== "allow" && answer !== "deny") || argvJson === undefined || screenshot === undefined
) {
  console.error(
    "usage: _browser_approvals.ts PAGE_URL PIN APPROVAL_ID allow|deny ARGV_JSON SCREENSHOT",
  );
  Deno.exit(2);
}

await withChromium(async (browser) => {
  const page = await browser.newPage();
  await page.setViewport({ width: 900, height: 1200 });
  // Every form post and what Chromium chose to send with it (observed, never changed).
  const posts: { status: number; origin: string | null; fetchSite: string | null }[] = [];
  page.on("response", (response) => {
    const request = response.request();
    if (request.method() === "POST" && new URL(response.url()).pathname === "/approvals") {
      const headers = request.headers();
      posts.push({
        status: response.status(),
        origin: headers["origin"] ?? null,
        fetchSite: headers["sec-fetch-site"] ?? null,
      });
    }
  });
  const opened = await page.goto(pageUrl, { waitUntil: "load" });
  if (opened === null || opened.status() !== 200) {
    throw new Error(`The approvals page answered ${opened?.status()}: ${await page.content()}`);
  }
  if ((await page.content()).includes(approvalId)) {
    throw new Error("The approvals page showed the queue before the PIN was entered.");
  }
  await page.type('input[name="pin"]', pin);
  await Promise.all([
    page.waitForNavigation({ waitUntil: "load" }),
    page.click('button[value="unlock"]'),
  ]);
  const section = `section#approval-${approvalId}`;
  const shown = await page.$(section);
  if (shown === null) {
    throw new Error(`Approval ${approvalId} is not on the unlocked page: ${await page.content()}`);
  }
  const text = await page.$eval(section, (element) => element.textContent ?? "");
  if (!text.includes(argvJson)) {
    throw new Error(`The page does not show the argv ${argvJson}: ${text}`);
  }
  await page.screenshot({ path: screenshot, fullPage: true });
  await Promise.all([
    page.waitForNavigation({ waitUntil: "load" }),
    page.click(`${section} button[value="${answer}"]`),
  ]);
  const outcome = await page.$eval("main", (element) => element.textContent ?? "");
  console.log(JSON.stringify({ posts, outcome, screenshot }));
});
