// The console answers under one host name of its own (BANK_CONSOLE_HOST_NAME, by default
// `bank-console.localhost`, which browsers resolve to loopback by themselves). A browser
// keeps cookies by host name and ignores the port, so a console opened as
// `http://127.0.0.1:<port>/` would hand its session cookie to every other web service the
// operator's browser visits on 127.0.0.1; under a name of its own the cookie (host-only: no
// Domain attribute) goes to the console alone. The Host header is checked on every request:
//
// - the console's name, with any port (an SSH tunnel or a proxy may map the port; the port
//   changes nothing for cookies): answered;
// - a loopback address or `localhost` (the old URL): a GET is sent to the same path under the
//   console's name, with no cookie set; any other method is refused (421);
// - any other name (a DNS-rebinding page, a mistyped proxy): refused, 421 Misdirected Request;
// - no Host header, or one that is not a host: 400.

export type HostVerdict =
  | { kind: 'ok' }
  | { kind: 'redirect'; location: string }
  | { kind: 'refused'; status: 400 | 421; message: string }

/** `name[:port]` or `[v6]:port`, lower-cased: the name and the port as written (or ''). */
export function parseHost(header: string | undefined): { name: string; port: string } | null {
  if (!header) return null
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(header.trim().toLowerCase())
  if (!m) return null
  return { name: m[1]!, port: m[2] ?? '' }
}

function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(name)
}

export function checkHost(
  header: string | undefined,
  request: { method: string; path: string },
  console: { hostName: string; secure: boolean },
): HostVerdict {
  const host = parseHost(header)
  if (!host) {
    return { kind: 'refused', status: 400, message: 'The request named no host (Host header).' }
  }
  if (host.name === console.hostName) return { kind: 'ok' }
  if (isLoopbackName(host.name) && request.method === 'GET') {
    const scheme = console.secure ? 'https' : 'http'
    const port = host.port ? `:${host.port}` : ''
    return { kind: 'redirect', location: `${scheme}://${console.hostName}${port}${request.path}` }
  }
  return {
    kind: 'refused',
    status: 421,
    message: 'This console does not answer under this host name: open it under its own.',
  }
}
