/**
 * A headless Chromium for the page tests, driven by puppeteer-core (no browser download):
 * Debian's `/usr/bin/chromium`, or the path in `CHROMIUM`. `chromiumPath()` is undefined when
 * neither exists, so a test can skip with a clear message instead of failing.
 */
import { existsSync } from "node:fs";
import puppeteer, { type Browser, type Page } from "puppeteer-core";

export const DEFAULT_CHROMIUM = "/usr/bin/chromium";

/** The Chromium to drive, or undefined when there is none. */
export function chromiumPath(): string | undefined {
	const path = process.env.CHROMIUM?.trim() || DEFAULT_CHROMIUM;
	return existsSync(path) ? path : undefined;
}

/** Why the browser tests skip, for the test run's output. */
export function noChromiumMessage(): string {
	return `no Chromium at ${process.env.CHROMIUM?.trim() || DEFAULT_CHROMIUM}: the approval page's browser tests skip (install Debian's chromium, or point CHROMIUM at a Chrome or Chromium binary)`;
}

/** Launches the headless browser; the caller closes it. */
export async function launchBrowser(executablePath: string): Promise<Browser> {
	return puppeteer.launch({
		executablePath,
		headless: true,
		args: [
			"--no-sandbox",
			"--headless=new",
			"--disable-gpu",
			"--no-first-run",
			"--no-default-browser-check",
			"--disable-dev-shm-usage",
		],
	});
}

/** Clicks what submits a form (the selector) and waits for the page the answer loads. */
export async function submit(page: Page, selector: string): Promise<void> {
	await Promise.all([
		page.waitForNavigation({ waitUntil: "load" }),
		page.click(selector),
	]);
}

/** The text of the page's `main`. */
export function mainText(page: Page): Promise<string> {
	return page.$eval("main", (m) => m.textContent ?? "");
}
