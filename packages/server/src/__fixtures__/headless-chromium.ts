import { chromium, type Browser } from "playwright-core";

/**
 * Debian's Chromium, headless, as every Inspector page test drives it (playwright-core downloads no browser):
 * one place for the flags. `--no-sandbox` because the tests may run as root, where Chromium's sandbox refuses to
 * start; no GPU; no background networking, component updates, first-run or sync, so nothing leaves 127.0.0.1.
 */
export function launchHeadlessChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
}
