import { createHash } from 'node:crypto';

/**
 * The Content-Security-Policy of a page made of HTML and one inline stylesheet: that style (by
 * its hash) and nothing else, no script, no image, no form, no frame.
 */
export const inlineStylePageCsp = (style: string): string =>
  [
    "default-src 'none'",
    `style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

/** No inline script or style, nothing from another origin: /demo, /flows and /flows/funnel only talk to this service. */
export const DEMO_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
