/**
 * URLs as they may be printed: a registry URL can carry credentials in its
 * userinfo (https://user:pass@host), and a start-up log line or an error
 * message must never show them. Dependency-free, so the config module can use
 * it for its summary.
 */

/** The URL with any userinfo replaced by ***, for logs and error messages. */
export function redactUrl(url: string): string {
  // The authority runs to the first / ? or #; its userinfo to the last @ in it.
  return url.replace(/^([^:/?#]*:\/\/)[^/?#]*@/, '$1***@');
}
