import dns from 'node:dns'
import net from 'node:net'
import { assert } from '../errors.ts'

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
for (const [network, prefix] of [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16],
    ['100.64.0.0', 10]] as const) {
  privateRanges.addSubnet(network, prefix, 'ipv4')
}
privateRanges.addSubnet('fc00::', 7, 'ipv6')
// Site-local (deprecated by RFC 3879, still routed inside some networks).
privateRanges.addSubnet('fec0::', 10, 'ipv6')

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
for (const [network, prefix] of [['::', 128], ['100::', 64], ['2001:db8::', 32],
    ['ff00::', 8]] as const) {
  special.addSubnet(network, prefix, 'ipv6')
}

/**
 * What kind of address `ip` is. An IPv6 address that carries an IPv4 address (mapped,
 * compatible, translated, NAT64, 6to4, Teredo: see `ipv4_carriers`) counts as that IPv4
 * address, for a connection to it reaches the IPv4 host: `[::ffff:7f00:1]` is loopback.
 */
export function addressKind(ip: string): AddressKind {
  const family = net.isIP(ip)
  if (family === 0) return 'special'
  if (family === 4) return listedKind(ip, 'ipv4')
  // `::` and `::1` lie in the IPv4-compatible range but are IPv6's own: judged first.
  const own = listedKind(ip, 'ipv6')
  if (own !== 'public') return own
  const embedded = embeddedIpv4(ip)
  if (!embedded) return 'public'
  const kind = listedKind(embedded.address, 'ipv4')
  return kind === 'public' && embedded.neverPublic ? 'private' : kind
}

function listedKind(ip: string, type: 'ipv4' | 'ipv6'): AddressKind {
  if (loopback.check(ip, type)) return 'loopback'
  if (privateRanges.check(ip, type)) return 'private'
  if (linkLocal.check(ip, type)) return 'link_local'
  if (special.check(ip, type)) return 'special'
  return 'public'
}

/**
 * IPv6 ranges that carry an IPv4 address: `at` is the offset of its four bytes, `xor` what
 * they are hidden under. The ranges do not overlap.
 */
const ipv4_carriers: Array<{
    prefix: string; bits: number; at: number; xor?: number; neverPublic?: true }> = [
  // IPv4-mapped, ::ffff:a.b.c.d (RFC 4291 2.5.5.2).
  { prefix: '::ffff:0:0', bits: 96, at: 12 },
  // IPv4-compatible, ::a.b.c.d (RFC 4291 2.5.5.1; deprecated, still parsed everywhere).
  { prefix: '::', bits: 96, at: 12 },
  // IPv4-translated, ::ffff:0:a.b.c.d (RFC 2765, SIIT).
  { prefix: '::ffff:0:0:0', bits: 96, at: 12 },
  // NAT64's well-known prefix, only ever a /96 (RFC 6052 2.1).
  { prefix: '64:ff9b::', bits: 96, at: 12 },
  // NAT64 local-use (RFC 8215): judged by the /96 form's address; but its operator may use
  // another prefix length, which moves the IPv4 address (RFC 6052 2.2) to where the bank
  // cannot tell, and the range is a network's own, never the internet's. So an address
  // that does not embed a refused one is still private, never public.
  { prefix: '64:ff9b:1::', bits: 48, at: 12, neverPublic: true },
  // 6to4, 2002:AABB:CCDD::/48 for AA.BB.CC.DD (RFC 3056).
  { prefix: '2002::', bits: 16, at: 2 },
  // Teredo (RFC 4380): the client's public address is the last 32 bits, every bit inverted.
  { prefix: '2001::', bits: 32, at: 12, xor: 0xff },
]

const carrierLists = ipv4_carriers.map((carrier) => {
  const list = new net.BlockList()
  list.addSubnet(carrier.prefix, carrier.bits, 'ipv6')
  return { list, carrier }
})

/** The IPv4 address an IPv6 address carries, when it is of a carrying range. */
export function embeddedIpv4(ip: string): { address: string; neverPublic: boolean } | undefined {
  // A zone (`fe80::1%eth0`) names an interface, not an address.
  const unzoned = ip.split('%')[0]!
  const bytes = ipv6Bytes(unzoned)
  if (!bytes) return undefined
  const carrier = carrierLists.find((entry) => entry.list.check(unzoned, 'ipv6'))?.carrier
  if (!carrier) return undefined
  const address = [...bytes.subarray(carrier.at, carrier.at + 4)].map((byte) => byte ^ (carrier.xor
    ?? 0)).join('.')
  return { address, neverPublic: carrier.neverPublic === true }
}

/**
 * The 16 bytes of an IPv6 address, or undefined when `address` is not one. The WHATWG URL
 * parser (Node's own) reads every textual form — a dotted IPv4 tail, `::` anywhere, leading
 * zeros, upper case — and writes it back as hexadecimal groups with one `::` at most, which
 * is all this has to expand.
 */
function ipv6Bytes(address: string): Uint8Array | undefined {
  if (!net.isIPv6(address)) return undefined
  let hostname: string
  try {
    hostname = new URL(`http://[${address}]/`).hostname
  } catch {
    return undefined
  }
  const [head = '', tail] = hostname.slice(1, -1).split('::')
  const headGroups = head === '' ? [] : head.split(':')
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':')
  const zeros = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length
  const groups = [...headGroups, ...Array<string>(zeros).fill('0'), ...tailGroups].map(
    (group) => parseInt(group, 16))
  assert(groups.length === 8 && groups.every((group) => group >= 0 && group <= 0xffff),
    `the URL parser wrote ${hostname} for ${address}`)
  return Uint8Array.from(groups.flatMap((group) => [group >> 8, group & 255]))
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
  if (text.length > url_length_max) return {
    refusal: `must be at most ${url_length_max} characters` }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { refusal: 'must be an absolute URL' }
  }
  const schemes = sandbox ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(url.protocol)) return { refusal: sandbox ? 'must be an http:// or https:// URL' : 'must be an https:// URL' }
  if (url.hostname === '') return { refusal: 'must name a host' }
  if (url.username !== '' || url.password !== '') return {
    refusal: 'must not carry a user name or password' }
  return { url }
}

/** The host as an IP address when the URL names one (`[::1]` without its brackets). */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  return net.isIP(host) ? host : undefined
}

/** Resolves a host name to every address it has (what the connection may use). */
export type Resolver = (hostname: string) => Promise<string[]>

export const systemResolver: Resolver = async (hostname) => (await dns.promises.lookup(hostname,
  { all: true, verbatim: true })).map((entry) => entry.address)

const set_time_lookup_ms = 2_000

/**
 * The check when a partner sets its endpoint: the URL's form, then its host. An address
 * literal, `localhost` and names under `.localhost` are judged as they are; another name
 * is resolved and refused when any of its addresses is. A name that does not resolve (yet)
 * is accepted: the check at delivery time decides then.
 */
export async function checkEndpointUrl(text: string, sandbox: boolean,
    resolve: Resolver = systemResolver): Promise<string | undefined> {
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
