import assert from 'node:assert/strict'
import { test } from 'node:test'
import { addressKind, checkEndpointUrl, type AddressKind, type Resolver } from '../../src/webhooks/url-policy.ts'

// IPv6 addresses that carry an IPv4 address are judged by the IPv4 address (issue 28): a
// URL whose host is such a form of a loopback, private, link-local or metadata address is
// refused like the IPv4 address itself, at the endpoint check and at delivery (both ask
// addressKind).

const unresolvable: Resolver = async () => []

/** Each IPv4 address's four bytes as two hexadecimal groups: 127.0.0.1 → ['7f00', '1']. */
function hexGroups(ipv4: string, xor = 0): [string, string] {
  const [a, b, c, d] = ipv4.split('.').map((part) => Number(part) ^ xor) as [number, number, number,
    number]
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)]
}

// How each carrying range writes an IPv4 address, built here from the RFCs' layouts.
const forms: Record<string, (ipv4: string) => string> = {
  'mapped, dotted': (v4) => `::ffff:${v4}`,
  'mapped, hex': (v4) => `::ffff:${hexGroups(v4).join(':')}`,
  'mapped, written out': (v4) =>
    `0:0:0:0:0:FFFF:${hexGroups(v4).map((g) => g.padStart(4, '0')).join(':')}`,
  'compatible, dotted': (v4) => `::${v4}`,
  'compatible, hex': (v4) => `::${hexGroups(v4).join(':')}`,
  'translated (SIIT)': (v4) => `::ffff:0:${hexGroups(v4).join(':')}`,
  'NAT64 well-known': (v4) => `64:ff9b::${v4}`,
  'NAT64 well-known, hex': (v4) => `64:ff9b::${hexGroups(v4).join(':')}`,
  '6to4': (v4) => `2002:${hexGroups(v4).join(':')}::1`,
  '6to4, host part': (v4) => `2002:${hexGroups(v4).join(':')}:abcd:1:2:3:4`,
  Teredo: (v4) => `2001:0:4136:e378:8000:63bf:${hexGroups(v4, 0xff).join(':')}`,
}

const ipv4s: Array<[string, AddressKind]> = [
  ['127.0.0.1', 'loopback'],
  ['127.8.9.10', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.4.4', 'private'],
  ['192.168.1.20', 'private'],
  ['100.64.0.1', 'private'],
  ['169.254.169.254', 'link_local'],
  ['0.0.0.0', 'special'],
  ['8.8.8.8', 'public'],
  ['93.184.215.14', 'public'],
]

test('url policy - every IPv6 form of an IPv4 address is judged as that address', () => {
  for (const [ipv4, kind] of ipv4s) {
    assert.equal(addressKind(ipv4), kind, ipv4)
    for (const [name, form] of Object.entries(forms)) {
      assert.equal(addressKind(form(ipv4)), kind, `${name}: ${form(ipv4)} carries ${ipv4}`)
    }
  }
})

test('url policy - a table of IPv6 forms written out', () => {
  const table: Array<[string, AddressKind]> = [
    // IPv6's own, which lie in the compatible range: not read as 0.0.0.0 and 0.0.0.1.
    ['::1', 'loopback'],
    ['::', 'special'],
    ['::2', 'special'],
    ['::ffff:7f00:1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:a9fe:a9fe', 'link_local'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link_local'],
    ['64:ff9b::808:808', 'public'],
    // NAT64 local-use: by its /96 form's address, and never public (the range is a network's own).
    ['64:ff9b:1::7f00:1', 'loopback'],
    ['64:ff9b:1::c0a8:101', 'private'],
    ['64:ff9b:1::808:808', 'private'],
    ['64:ff9b:1:7f00:1::', 'special'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'link_local'],
    ['2002:c0a8:0101::1', 'private'],
    ['2002:808:808::1', 'public'],
    // RFC 4380's example: server 65.54.227.120, client 192.0.2.45 (documentation: special).
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'special'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'private'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'public'],
    // Not carriers: other IPv6 addresses keep their own kind.
    ['2606:4700:4700::1111', 'public'],
    ['2001:db8::7f00:1', 'special'],
    ['fe80::7f00:1%eth0', 'link_local'],
    ['fd00::7f00:1', 'private'],
    ['fec0::1', 'private'],
    ['not an address', 'special'],
  ]
  for (const [ip, kind] of table) assert.equal(addressKind(ip), kind, ip)
})

test('url policy - production refuses endpoint URLs whose host is an IPv6 form of a refused IPv4 address', async () => {
  const refused = [
    'https://[::ffff:127.0.0.1]/hooks',
    'https://[::ffff:7f00:1]/hooks',
    'https://[::7f00:1]/hooks',
    'https://[::127.0.0.1]/hooks',
    'https://[::ffff:0:a00:1]/hooks',
    'https://[64:ff9b::a9fe:a9fe]/latest/meta-data',
    'https://[64:ff9b::10.0.0.1]/hooks',
    'https://[64:ff9b:1::7f00:1]/hooks',
    'https://[64:ff9b:1::808:808]/hooks',
    'https://[2002:7f00:1::1]/hooks',
    'https://[2002:a9fe:a9fe::]/hooks',
    'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hooks',
    'https://[2001:0:4136:e378:8000:63bf:5601:5601]/hooks',
  ]
  for (const url of refused) {
    const refusal = await checkEndpointUrl(url, false, unresolvable)
    assert.match(refusal ?? 'accepted', /must not lead to a loopback, private or link-local address/, url)
  }
  for (const url of ['https://[::ffff:808:808]/hooks', 'https://[64:ff9b::808:808]/hooks', 'https://[2002:808:808::1]/hooks', 'https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/hooks']) {
    assert.equal(await checkEndpointUrl(url, false, unresolvable), undefined, url)
  }
})

test('url policy - the sandbox allows IPv6 forms of loopback, not of private or link-local addresses', async () => {
  for (const url of ['http://[::ffff:7f00:1]:8080/hooks', 'http://[::7f00:1]/hooks', 'http://[2002:7f00:1::1]/hooks', 'http://[64:ff9b::7f00:1]/hooks']) {
    assert.equal(await checkEndpointUrl(url, true, unresolvable), undefined, url)
  }
  for (const url of ['http://[::ffff:a00:1]/hooks', 'http://[64:ff9b::a9fe:a9fe]/hooks', 'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/hooks']) {
    assert.match((await checkEndpointUrl(url, true, unresolvable)) ?? 'accepted', /must not lead to/, url)
  }
})

test('url policy - a name that resolves to an IPv6 form of a private address is refused', async () => {
  const resolver: Resolver = async () => ['2606:4700:4700::1111', '::ffff:10.1.2.3']
  assert.match((await checkEndpointUrl('https://hooks.example.com/bank', false, resolver)) ?? 'accepted', /::ffff:10\.1\.2\.3 is a private address/)
})
