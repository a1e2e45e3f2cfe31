/**
 * Test helpers for secrets as tools render them: a fake key with the line
 * widths and alphabet of a real one, and the check that nothing of it
 * survived redaction.
 */
import assert from "node:assert/strict";

/** Base64 of seeded pseudo-random bytes, so the body has `+`, `/` and both cases like a real key. */
export function fakeBase64(bytes: number, seed: number): string {
  const data = new Uint8Array(bytes);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < bytes; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    data[i] = x & 0xff;
  }
  let binary = "";
  for (const b of data) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Cuts `base64` into lines of `width`, as PEM writers do. */
export function wrap(base64: string, width: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += width) lines.push(base64.slice(i, i + width));
  return lines;
}

/**
 * A fake PKCS#8 key file: 64-wide lines, a shorter last line (not a real
 * key). Its DER header says 1217 bytes, which is what the body holds, so it
 * reads as a whole key in order.
 */
export const FAKE_PKCS8_BODY = wrap("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + fakeBase64(1194, 11), 64);
export const FAKE_PKCS8 = [
  "-----BEGIN PRIVATE KEY-----",
  ...FAKE_PKCS8_BODY,
  "-----END PRIVATE KEY-----",
  "",
].join("\n");

/** A fake OpenSSH key file: 70-wide lines (not a real key). */
export const FAKE_OPENSSH_BODY = wrap(
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" + fakeBase64(300, 23),
  70,
);
export const FAKE_OPENSSH = [
  "-----BEGIN OPENSSH PRIVATE KEY-----",
  ...FAKE_OPENSSH_BODY,
  "-----END OPENSSH PRIVATE KEY-----",
  "",
].join("\n");

/** A fake classic GitHub token (not a real one). */
export const FAKE_GITHUB_TOKEN = "ghp_R8tq2Vx7LmN4pK9sW3yZ5aB1cD6eF0gH2jK4";

/** `text` as a terminal shows it: SGR and erase-line sequences removed (what grep and ls emit). */
export function withoutColour(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
}

/**
 * Fails when any 16-character stretch of `body` (the key's base64, lines
 * joined) appears in `out` once its line breaks, prefixes and escapes are
 * taken away (colour escapes too: split by them, a key still shows whole on
 * a terminal): 16 characters of a key are already more than redaction may
 * leave.
 */
export function assertNoKeyMaterial(shown: string, body: readonly string[], what: string): void {
  const out = withoutColour(shown);
  for (const line of body) {
    for (let i = 0; i + 16 <= line.length; i += 8) {
      const chunk = line.slice(i, i + 16);
      assert.ok(!out.includes(chunk), `${what}: key material ${JSON.stringify(chunk)} survived`);
    }
    if (line.length < 16 && line.length >= 8) {
      assert.ok(
        !out.includes(line),
        `${what}: the key's last line ${JSON.stringify(line)} survived`,
      );
    }
  }
}

/** Fails when any 8-character stretch of the token after its prefix survives. */
export function assertNoToken(shown: string, token: string, what: string): void {
  const out = withoutColour(shown);
  const secret = token.slice(4);
  for (let i = 0; i + 8 <= secret.length; i += 4) {
    const chunk = secret.slice(i, i + 8);
    assert.ok(!out.includes(chunk), `${what}: token part ${JSON.stringify(chunk)} survived`);
  }
}
