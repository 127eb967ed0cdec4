import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'

// The highly available topology's own network, for partition tests (scripts/topology.ts with
// `netns`): every node (each etcd member, each PostgreSQL node with its Patroni, HAProxy,
// each NATS server, each bank instance) runs in a network namespace of its own, with one
// veth pair to a Linux bridge in this machine's namespace and a private address in one /24
// of 10.213.0.0/16. This machine (the test, the operator) has the bridge's address, .1, and
// reaches every node. A partition is an nftables table of the `bridge` family on that
// bridge that drops every frame between a node and chosen peers, both ways and silently, as
// a cut cable or a broken switch port would: nothing is refused and no connection is reset.
// Healing is deleting that table. Names carry an id of the run (pb<id>-<node> namespaces,
// pb<id>br the bridge, pb<id>v<n> the veths, pb<id>_cut<n> the tables), so runs side by side
// do not collide; `teardownNetwork` removes all of them. Needs root, Debian's iproute2 and
// nftables.

export const netnsLimits = {
  /** Addresses are 10.213.<a random third octet>.<n>; the bridge (this machine) is .1. */
  first_octets: '10.213',
  attempts: 64,
}

export interface NetNode {
  ns: string
  address: string
  /** The veth's end on the bridge, in this machine's namespace. */
  veth: string
}

export interface NetworkLayout {
  id: string
  bridge: string
  /** The /24 the addresses are in, as three octets (10.213.x). */
  prefix: string
  /** This machine's address on the bridge. */
  hostAddress: string
  nodes: Record<string, NetNode>
  /** Partitions made so far (each an nftables table), for their names. */
  cuts: number
}

function run(command: string, args: string[], input?: string): string {
  return execFileSync(command, args, {
    encoding: 'utf8',
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
}

/** Runs each command, ignoring failures (a clean-up step whose object is already gone). */
function runEach(commands: string[][]): void {
  for (const [command, ...args] of commands) {
    try {
      run(command!, args)
    } catch {
      // Already gone.
    }
  }
}

/** The programs the namespaces and partitions need that are missing, by Debian package. */
export function missingNetnsPackages(): string[] {
  const missing: string[] = []
  for (const [command, pkg] of [['ip', 'iproute2'], ['nft', 'nftables']] as const) {
    try {
      run('sh', ['-c', `command -v ${command} || test -x /usr/sbin/${command}`])
    } catch {
      missing.push(pkg)
    }
  }
  return missing
}

/** Names and addresses for `names`, in a /24 and with an id no other run uses. */
export function planNetwork(names: readonly string[]): NetworkLayout {
  const routes = run('ip', ['-4', '-o', 'addr', 'show']) + run('ip', ['-4', 'route', 'show'])
  const namespaces = run('ip', ['netns', 'list'])
  for (let attempt = 0; attempt < netnsLimits.attempts; attempt++) {
    const id = randomBytes(2).toString('hex')
    const prefix = `${netnsLimits.first_octets}.${randomBytes(1)[0]! % 254}`
    if (routes.includes(`${prefix}.`) || namespaces.includes(`pb${id}-`)) continue
    const nodes: Record<string, NetNode> = {}
    names.forEach((name, i) => {
      nodes[name] = { ns: `pb${id}-${name}`, address: `${prefix}.${i + 2}`, veth: `pb${id}v${i}` }
    })
    return { id, bridge: `pb${id}br`, prefix, hostAddress: `${prefix}.1`, nodes, cuts: 0 }
  }
  throw new Error(`no free /24 in ${netnsLimits.first_octets}.0.0/16 for the topology's network`)
}

/** Creates the bridge and every node's namespace and veth pair; removes them if it fails. */
export function createNetwork(net: NetworkLayout): void {
  try {
    run('ip', ['link', 'add', net.bridge, 'type', 'bridge'])
    run('ip', ['addr', 'add', `${net.hostAddress}/24`, 'dev', net.bridge])
    run('ip', ['link', 'set', net.bridge, 'up'])
    for (const node of Object.values(net.nodes)) {
      run('ip', ['netns', 'add', node.ns])
      const pair = ['type', 'veth', 'peer', 'name', 'eth0', 'netns', node.ns]
      run('ip', ['link', 'add', node.veth, ...pair])
      run('ip', ['link', 'set', node.veth, 'master', net.bridge, 'up'])
      run('ip', ['-n', node.ns, 'addr', 'add', `${node.address}/24`, 'dev', 'eth0'])
      run('ip', ['-n', node.ns, 'link', 'set', 'eth0', 'up'])
      run('ip', ['-n', node.ns, 'link', 'set', 'lo', 'up'])
    }
  } catch (error) {
    teardownNetwork(net)
    throw error
  }
}

/** The partitions' tables of this network that exist now. */
function cutTables(net: NetworkLayout): string[] {
  let listing = ''
  try {
    listing = run('nft', ['list', 'tables', 'bridge'])
  } catch {
    return []
  }
  return [...listing.matchAll(/^table bridge (\S+)$/gm)]
    .map((m) => m[1]!)
    .filter((name) => name.startsWith(`pb${net.id}_`))
}

/**
 * Removes the partitions, the veths, the namespaces and the bridge. Run it once the nodes'
 * processes are gone: a namespace a process still runs in lives on until that process ends.
 */
export function teardownNetwork(net: NetworkLayout): void {
  runEach(cutTables(net).map((table) => ['nft', 'delete', 'table', 'bridge', table]))
  runEach(Object.values(net.nodes).map((node) => ['ip', 'link', 'del', node.veth]))
  runEach(Object.values(net.nodes).map((node) => ['ip', 'netns', 'del', node.ns]))
  runEach([['ip', 'link', 'del', net.bridge]])
}

/** What of this network is still there: namespaces and links with its id (none, after teardown). */
export function leftovers(net: NetworkLayout): string[] {
  const namespaces = run('ip', ['netns', 'list']).split('\n')
  const links = run('ip', ['-o', 'link', 'show']).split('\n')
  const mark = `pb${net.id}`
  return [...namespaces, ...links, ...cutTables(net)].filter((line) => line.includes(mark))
}

/**
 * Cuts `node` off from `peers` (node names): every frame between them is dropped on the
 * bridge, both ways. Returns the repair, which deletes the partition's table.
 */
export function cutOff(net: NetworkLayout, node: string, peers: readonly string[]): () => void {
  const address = (name: string) => {
    const found = net.nodes[name]
    if (!found) throw new Error(`no node ${name} in the topology's network`)
    return found.address
  }
  const table = `pb${net.id}_cut${++net.cuts}`
  const own = address(node)
  const others = peers.map(address).join(', ')
  run('nft', ['-f', '-'], [
    `table bridge ${table} {`,
    `  set peers { type ipv4_addr; elements = { ${others} } }`,
    '  chain forward {',
    '    type filter hook forward priority 0; policy accept;',
    `    ip saddr ${own} ip daddr @peers drop`,
    `    ip daddr ${own} ip saddr @peers drop`,
    '  }',
    '}',
    '',
  ].join('\n'))
  return () => runEach([['nft', 'delete', 'table', 'bridge', table]])
}

/**
 * The command line that runs `command` in `node`'s namespace: `ip netns exec`, then, for a
 * process that must not run as root, `setpriv` to that user. Both replace themselves with
 * the next program, so the process id spawned is the program's own.
 */
export function inNamespace(
  net: NetworkLayout,
  node: string,
  command: string,
  args: readonly string[],
  user?: { uid: number; gid: number },
): { command: string; args: string[] } {
  const ns = net.nodes[node]?.ns
  if (!ns) throw new Error(`no node ${node} in the topology's network`)
  const as = user
    ? ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups']
    : []
  return { command: 'ip', args: ['netns', 'exec', ns, ...as, command, ...args] }
}
