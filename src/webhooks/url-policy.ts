import dns from 'node:dns'
import net from 'node:net'

// Where the bank may send webhooks. A partner names the URL, so without a policy it could
// make the bank call into its own network (SSRF). In production only `https://` URLs to
// public addresses are allowed; the sandbox also allows `http://` and loopback (a
// developer's receiver on their own machine). Private, link-local and other special
// addresses are refused in both modes. The check runs when an endpoint is set (400) and
// again at every delivery, on the addresses the name resolves to then; the connection goes
// to the very address that was checked (webhook-sender.ts), so a name that answers a public
// address to the check and a private one to the connection (DNS rebinding) gets nowhere.

export const url_length_max = 2048

export type AddressKind = 'public' | 'loopback' | 'private' | 'link_local' | 'special'

const loopback = new net.BlockList()
loopback.addSubnet('127.0.0.0', 8, 'ipv4')
loopback.addAddress('::1', 'ipv6')

const privateRanges = new net.BlockList()
for (const [network, prefix] of [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10]] as const) {
  privateRanges.addSubnet(network, prefix, 'ipv4')
}
privateRanges.addSubnet('fc00::', 7, 'ipv6')

const linkLocal = new net.BlockList()
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4')
linkLocal.addSubnet('fe80::', 10, 'ipv6')

// Not routable on the internet, or not a single host: "this network", IETF protocol
// assignments, documentation, benchmarking, multicast, reserved and broadcast.
const special = new net.BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['192.0.0.0', 24], ['192.0.2.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) {
  special.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [['::', 128], ['100::', 64], ['2001:db8::', 32], ['ff00::', 8]] as const) {
  special.addSubnet(network, prefix, 'ipv6')
}

/** What kind of address `ip` is; IPv4 written inside IPv6 (`::ffff:10.0.0.1`) counts as its IPv4. */
export function addressKind(ip: string): AddressKind {
  const family = net.isIP(ip)
  if (family === 0) return 'special'
  if (family === 6) {
    const embedded = embeddedIpv4(ip)
    if (embedded) return addressKind(embedded)
  }
  const type = family === 4 ? 'ipv4' : 'ipv6'
  if (loopback.check(ip, type)) return 'loopback'
  if (privateRanges.check(ip, type)) return 'private'
  if (linkLocal.check(ip, type)) return 'link_local'
  if (special.check(ip, type)) return 'special'
  return 'public'
}

/** The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`) IPv6 address. */
function embeddedIpv4(ip: string): string | undefined {
  const lower = ip.toLowerCase()
  for (const prefix of ['::ffff:', '64:ff9b::']) {
    if (!lower.startsWith(prefix)) continue
    const rest = lower.slice(prefix.length)
    if (net.isIPv4(rest)) return rest
    // The hexadecimal form, `::ffff:7f00:1`.
    const match = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest)
    if (match) {
      const high = parseInt(match[1]!, 16)
      const low = parseInt(match[2]!, 16)
      return [high >> 8, high & 255, low >> 8, low & 255].join('.')
    }
  }
  return undefined
}

/** Why the address may not be called in this mode, or undefined when it may. */
export function addressRefusal(ip: string, sandbox: boolean): string | undefined {
  const kind = addressKind(ip)
  if (kind === 'public' || (kind === 'loopback' && sandbox)) return undefined
  return `${ip} is a ${kind.replace('_', '-')} address`
}

/**
 * Checks a URL's form: absolute, `https:` (or `http:` in the sandbox), a host, no user
 * name or password, at most url_length_max characters. Returns the parsed URL, or the
 * reason it is refused.
 */
export function checkUrlForm(text: string, sandbox: boolean): { url: URL } | { refusal: string } {
  if (text.length > url_length_max) return { refusal: `must be at most ${url_length_max} characters` }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { refusal: 'must be an absolute URL' }
  }
  const schemes = sandbox ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(url.protocol)) return { refusal: sandbox ? 'must be an http:// or https:// URL' : 'must be an https:// URL' }
  if (url.hostname === '') return { refusal: 'must name a host' }
  if (url.username !== '' || url.password !== '') return { refusal: 'must not carry a user name or password' }
  return { url }
}

/** The host as an IP address when the URL names one (`[::1]` without its brackets). */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  return net.isIP(host) ? host : undefined
}

/** Resolves a host name to every address it has (what the connection may use). */
export type Resolver = (hostname: string) => Promise<string[]>

export const systemResolver: Resolver = async (hostname) => (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)

const set_time_lookup_ms = 2_000

/**
 * The check when a partner sets its endpoint: the URL's form, then its host. An address
 * literal, `localhost` and names under `.localhost` are judged as they are; another name
 * is resolved and refused when any of its addresses is. A name that does not resolve (yet)
 * is accepted: the check at delivery time decides then.
 */
export async function checkEndpointUrl(text: string, sandbox: boolean, resolve: Resolver = systemResolver): Promise<string | undefined> {
  const form = checkUrlForm(text, sandbox)
  if ('refusal' in form) return form.refusal
  const host = form.url.hostname.toLowerCase()
  const literal = literalAddress(form.url)
  let addresses: string[]
  if (literal) addresses = [literal]
  else if (host === 'localhost' || host.endsWith('.localhost')) addresses = ['127.0.0.1']
  else addresses = await withTimeout(resolve(host), set_time_lookup_ms).catch(() => [])
  for (const address of addresses) {
    const refusal = addressRefusal(address, sandbox)
    if (refusal) return `must not lead to a loopback, private or link-local address (${refusal})`
  }
  return undefined
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), ms)
    timer.unref()
    promise.then(resolve, reject).finally(() => clearTimeout(timer))
  })
}
