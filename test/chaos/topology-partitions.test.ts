import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { chaosPass } from './pass.ts'

// Network partitions in the highly available topology, under transfers from two bank
// instances, one after the other on one topology whose every node (each etcd member, each
// PostgreSQL node with its Patroni, HAProxy, each NATS server, each bank instance) runs in a
// network namespace of its own (scripts/topology-netns.ts). A partition drops every packet
// between a node and chosen peers, both ways, without a reply, as a cut cable does; this
// machine (the test) still reaches every node, to watch it.
// 1. The primary PostgreSQL node cut off from etcd, HAProxy, the bank instances and the
//    standby. It cannot renew its leader lease, nor reach the standby to stay primary in
//    Patroni's failsafe mode, so its Patroni stops it; once the lease has run out the
//    standby is promoted and HAProxy sends the bank there. Both nodes are watched the whole
//    time: never may both be primary at once (split brain). Healed after the failover, the
//    old primary comes back as the synchronous standby.
// 2. A bank instance cut off from PostgreSQL (from HAProxy and both nodes). It must answer
//    503 while it is away (never 500, never silence: the clients wait as long as it takes),
//    say so on /readyz, and serve again by itself once the network is back.
// 3. The NATS server the first bank instance is connected to cut off from the other two (the
//    partners' clients are on the third). Requests routed to it before its routes are
//    dropped are lost (504 after the client's 5 s, and sent again); then the other instance
//    serves everything. Healed, the server rejoins the cluster by itself.
// 4. The etcd leader cut off from everything. The other two members keep their quorum and
//    elect a leader; the primary's Patroni renews its lease through them, so there is no
//    failover and writes go on. Healed, the member follows the new leader.
// 5. HAProxy cut off from both bank instances (there is one HAProxy, and both instances'
//    DATABASE_URL name it). Both answer 503 and say not ready while away, and serve again
//    by themselves once the network is back.
// 6. The primary cut off from etcd, HAProxy and the bank instances, but not from its
//    standby. Its Patroni cannot reach etcd, but the standby answers its failsafe call, so
//    it stays primary; the standby, called, takes it for the leader and is not promoted
//    although the lease runs out. Nothing can reach the primary: writes wait (503) until
//    the repair, and there is never a second primary. Mostly it takes the lease back on the
//    repair; once it stepped down then, and the standby was promoted a lease later.
// Each time nothing acknowledged may be lost or doubled and `ledger verify` must be clean.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { Cleanup, until } = await import('./processes.ts')
  const { runChaos } = await import('./scenario.ts')
  const { leftovers } = await import('../../scripts/topology-netns.ts')
  const { clusterSettings, withClient } = await import('../../scripts/topology.ts')
  const { since } = await import('./database-faults.ts')
  const topo = await import('./topology-faults.ts')
  type Topology = import('../../scripts/topology.ts').Topology
  type PostgresNode = import('../../scripts/topology.ts').PostgresNode
  type TopologyRun = import('./topology-faults.ts').TopologyRun
  type FaultRun = import('./topology-faults.ts').FaultRun
  type TransferLoad = import('./load.ts').TransferLoad

  const limits = {
    /** How often both PostgreSQL nodes are asked whether they are the primary. */
    watch_interval_ms: 100,
    watch_query_timeout_ms: 1_000,
    /** The instance stays cut off until the load has had this many 503s. */
    load_503_min: 64,
    /** Each step of the instance's partition (away, 503s, back, serving) within this. */
    instance_step_ms: 30_000,
    /** After a NATS partition is repaired, the load goes on for this long at least, … */
    load_after_repair_ms: 15_000,
    /** … and for this many further requests at most. */
    load_after_repair: 1_500,
  }

  const cleanup = new Cleanup()
  let run: TopologyRun | undefined
  after(async () => {
    const net = run?.topology.layout.net
    await cleanup.run()
    // Nothing of the network may be left: namespaces, veths, the bridge, partitions.
    if (net) assert.deepEqual(leftovers(net), [], 'the topology network is removed')
  })

  before(
    async () => {
      if (topo.topologyMissing(true).length === 0 && process.getuid?.() === 0) {
        run = await topo.startTopology(cleanup, {}, true)
      }
    },
    { timeout: topo.topologyFaultLimits.start_timeout_ms },
  )

  /** Whether a node is a writable primary now (false when in recovery or not answering). */
  async function isPrimary(topology: Topology, node: PostgresNode): Promise<boolean> {
    const ask = withClient(topology.nodeUrl(node), async (c) => {
      const result = await c.query<{ recovery: boolean }>(
        'select pg_is_in_recovery() as recovery')
      return result.rows[0]?.recovery === false
    })
    const late = new Promise<boolean>((resolve) =>
      setTimeout(() => resolve(false), limits.watch_query_timeout_ms).unref())
    return Promise.race([ask.catch(() => false), late])
  }

  /**
   * Asks both nodes at once, every `watch_interval_ms`, whether each is the primary, from
   * `start` until stopped: when the old primary was first seen not primary, when another
   * node was first seen primary, and how many times both were primary at once.
   */
  function watchPrimaries(topology: Topology, old: PostgresNode, start: number) {
    const seen = { old_not_primary_ms: -1, new_primary_ms: -1, both_primary: 0, samples: 0 }
    let watching = true
    const watching_ = (async () => {
      while (watching) {
        const roles = await Promise.all(
          topology.layout.postgres.map(async (n) => ({ n, primary: await isPrimary(topology, n) })))
        seen.samples++
        const primaries = roles.filter((r) => r.primary)
        if (primaries.length > 1) seen.both_primary++
        if (seen.old_not_primary_ms < 0 && !primaries.some((r) => r.n === old)) {
          seen.old_not_primary_ms = since(start)
        }
        if (seen.new_primary_ms < 0 && primaries.some((r) => r.n !== old)) {
          seen.new_primary_ms = since(start)
        }
        await new Promise((resolve) => setTimeout(resolve, limits.watch_interval_ms))
      }
    })()
    return {
      seen,
      stop: async () => {
        watching = false
        await watching_
        return seen
      },
    }
  }

  /** Every node's name but `name`'s. */
  const everyoneBut = (topology: Topology, name: string) =>
    Object.keys(topology.layout.net!.nodes).filter((n) => n !== name)

  test(
    'topology partitions - the primary cut off from etcd, HAProxy, the banks and the ' +
      'standby under transfers: it steps down, the standby takes over, no split brain, ' +
      'nothing acknowledged lost or doubled',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t, true)) return
      await topo.explained(run!.topology, () => primaryCutOff())
    },
  )

  async function primaryCutOff(): Promise<void> {
    const { topology, services } = run!
    const old = await topology.primary()
    assert.ok(old, 'the topology has a primary')
    const faultRun: FaultRun = await topo.newFaultRun(run!, cleanup, true)
    let watch: ReturnType<typeof watchPrimaries> | undefined
    let heal: () => void = () => undefined
    cleanup.add(() => heal())
    let healed = 0
    await runChaos({
      name: 'topology: primary cut off',
      bank: faultRun.bank,
      databaseUrl: topology.databaseUrl,
      services: () => services,
      fault: (load) =>
        topo.faultUnderLoad(
          faultRun,
          load,
          async () => {
            watch = watchPrimaries(topology, old, performance.now())
            heal = topology.cut(old.name, everyoneBut(topology, old.name))
          },
          async () => {
            // Healed only once the old primary has stepped down, as after a real failover.
            await until('the old primary has stepped down',
              () => (watch!.seen.old_not_primary_ms >= 0 || undefined),
              topo.topologyFaultLimits.test_timeout_ms)
            heal()
            healed = performance.now()
          },
        ),
    })
    const seen = await watch!.stop()
    const now = await topology.primary()
    Object.assign(faultRun.figures, { new_primary: now?.name, ...seen })
    await topo.untilStandbyBack(topology, faultRun, healed)
    const codes = topo.report('primary cut off', faultRun)
    assert.notEqual(now?.name, old.name, 'the standby became the primary')
    assert.equal(seen.both_primary, 0, 'never two primaries at once (no split brain)')
    assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
    assert.equal(codes['504'] ?? 0, 0, 'every request was answered by the bank')
  }

  /** Instance i's replies so far by code, from its /metrics (bank_requests_total). */
  async function instanceReplies(topology: Topology, i: number): Promise<Record<string, number>> {
    const host = topology.host(`bank${i + 1}`)
    const url = `http://${host}:${topo.topologyFaultLimits.bank_metrics_port}/metrics`
    const text = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text()
    const codes: Record<string, number> = {}
    for (const m of text.matchAll(/^bank_requests_total\{[^}]*code="(\d+)"[^}]*\} (\S+)$/gm)) {
      codes[m[1]!] = (codes[m[1]!] ?? 0) + Number(m[2])
    }
    return codes
  }

  const difference = (
    after_: Record<string, number>,
    before_: Record<string, number>,
  ): Record<string, number> =>
    Object.fromEntries(Object.entries(after_).map(([code, n]) => [code, n - (before_[code] ?? 0)])
      .filter(([, n]) => (n as number) > 0))

  test(
    'topology partitions - a bank instance cut off from PostgreSQL under transfers: it ' +
      'answers 503 while away and serves again by itself, nothing lost or doubled',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t, true)) return
      await topo.explained(run!.topology, () => instanceCutOff())
    },
  )

  async function instanceCutOff(): Promise<void> {
    const { topology, services } = run!
    const faultRun: FaultRun = await topo.newFaultRun(run!, cleanup, true)
    let heal: () => void = () => undefined
    cleanup.add(() => heal())
    let whileAway: Record<string, number> = {}
    await runChaos({
      name: 'topology: bank instance cut off from PostgreSQL',
      bank: faultRun.bank,
      databaseUrl: topology.databaseUrl,
      services: () => services,
      fault: async (load) => {
        const other = await instanceReplies(topology, 0)
        const before_ = await repliesOf(topology, [1])
        const cut = performance.now()
        heal = topology.cut('bank2', ['haproxy', ...topology.layout.postgres.map((n) => n.name)])
        whileAway = await awayAndBack(topology, faultRun, load,
          { before_, cut, heal, instances: [1] })
        faultRun.figures.other_instance_replies_meanwhile =
          difference(await instanceReplies(topology, 0), other)
      },
    })
    const codes = topo.report('bank instance cut off from PostgreSQL', faultRun)
    assert.ok((whileAway['503'] ?? 0) > 0,
      `the cut-off instance answered 503 (${JSON.stringify(whileAway)})`)
    assert.equal(whileAway['500'] ?? 0, 0, 'the cut-off instance gave no 500')
    assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
    assert.equal(codes['504'] ?? 0, 0, 'every request was answered by the bank')
  }

  /** The replies of each instance in `instances` so far, by code. */
  const repliesOf = (topology: Topology, instances: number[]) =>
    Promise.all(instances.map((i) => instanceReplies(topology, i)))

  /** Every instance in `instances` says it is ready (`ready`), or every one says it is not. */
  const allReady = async (topology: Topology, instances: number[], ready: boolean) =>
    (await Promise.all(instances.map((i) => topo.bankReady(topology, i))))
      .every((r) => r === ready) || undefined

  /**
   * While `instances` are cut off from the database: until each says it is not ready and
   * the load has had 503s (only they give them; their /metrics wait on the database too, so
   * they are read after); then the network back, and until each is ready and has served
   * requests again. Their replies from the cut until the repair, by code, added up.
   */
  async function awayAndBack(
    topology: Topology,
    faultRun: FaultRun,
    load: TransferLoad,
    at: { before_: Record<string, number>[]; cut: number; heal: () => void; instances: number[] },
  ): Promise<Record<string, number>> {
    const { instances } = at
    const wait = limits.instance_step_ms
    const codesBefore = new Map(load.codes)
    faultRun.fault = { load, codesBefore }
    await until('the instances say they are not ready', () =>
      allReady(topology, instances, false), wait)
    faultRun.figures.not_ready_ms = since(at.cut)
    const unavailable = () => (load.codes.get('503') ?? 0) - (codesBefore.get('503') ?? 0)
    await until('the load has had 503s',
      () => unavailable() >= limits.load_503_min || undefined, wait)
    faultRun.figures.first_503s_ms = since(at.cut)
    at.heal()
    const healed = performance.now()
    faultRun.figures.cut_ms = Math.round(healed - at.cut)
    await until('the instances are ready again', () => allReady(topology, instances, true), wait)
    faultRun.figures.ready_again_ms = since(healed)
    const atRepair = await until('the instances answer /metrics',
      () => repliesOf(topology, instances), wait)
    await until('each instance has served a request again', async () =>
      (await repliesOf(topology, instances)).every((now, i) =>
        (difference(now, atRepair[i]!)['200'] ?? 0) > 0) || undefined, wait)
    faultRun.figures.serving_again_ms = since(healed)
    const away: Record<string, number> = {}
    for (const [i, replies] of atRepair.entries()) {
      for (const [code, n] of Object.entries(difference(replies, at.before_[i]!))) {
        away[code] = (away[code] ?? 0) + n
      }
    }
    faultRun.figures.instance_replies_until_ready = away
    return away
  }

  /**
   * Lets the load go on for as long as the test waits (past its own budget,
   * chaosLimits.load_ms), and after that long enough to show that the bank serves.
   */
  function keepLoadingOn(load: TransferLoad): void {
    load.deadline = Math.max(load.deadline, Date.now() + limits.load_after_repair_ms)
    load.maxRequests = Math.max(load.maxRequests, load.requests + limits.load_after_repair)
  }

  /** How many routes NATS server `name` has now, from its /routez. */
  async function routes(topology: Topology, name: string): Promise<number> {
    const node = topology.layout.nats.find((n) => n.name === name)!
    const url = `http://${topology.host(name)}:${node.monitorPort}/routez`
    const response = await fetch(url, { signal: AbortSignal.timeout(3_000) })
    return ((await response.json()) as { num_routes: number }).num_routes
  }

  test(
    'topology partitions - a NATS server cut off from its peers under transfers: its ' +
      'routes are dropped, the other instance serves, it rejoins; nothing lost or doubled',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t, true)) return
      await topo.explained(run!.topology, () => natsCutOff())
    },
  )

  async function natsCutOff(): Promise<void> {
    const { topology, services } = run!
    const faultRun: FaultRun = await topo.newFaultRun(run!, cleanup, false)
    const [node, ...peers] = topology.layout.nats.map((n) => n.name) as [string, ...string[]]
    const wait = topo.topologyFaultLimits.test_timeout_ms
    let heal: () => void = () => undefined
    cleanup.add(() => heal())
    let cut = 0
    let codes: Record<string, number> = {}
    await runChaos({
      name: 'topology: NATS server cut off from its peers',
      bank: faultRun.bank,
      databaseUrl: topology.databaseUrl,
      services: () => services,
      fault: (load) =>
        topo.faultUnderLoad(faultRun, load, async () => {
          heal = topology.cut(node, peers)
          cut = performance.now()
        }, async () => {
          // The partition may outlast the load's own budget (chaosLimits.load_ms; the routes
          // took 11 s to drop in some runs, 29 s in others).
          const keepLoading = () => keepLoadingOn(load)
          await until('the cut-off server has dropped its routes', async () =>
            (keepLoading(), (await routes(topology, node)) === 0) || undefined, wait)
          faultRun.figures.routes_dropped_ms = since(cut)
          // The third server's view: a route it still holds to the cut-off server.
          faultRun.figures.routes_of_third_at_repair = await routes(topology, peers.at(-1)!)
          heal()
          const healed = performance.now()
          faultRun.figures.cut_ms = Math.round(healed - cut)
          await until('the server is back in the cluster', async () =>
            (keepLoading(), (await routes(topology, node)) === peers.length) || undefined, wait)
          faultRun.figures.rejoined_ms = since(healed)
          keepLoading()
        }),
    }).finally(() => (codes = topo.report('NATS server cut off from its peers', faultRun)))
    assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
  }

  test(
    'topology partitions - the etcd leader cut off from everything under transfers: the ' +
      'other two members keep quorum, no failover, it rejoins; nothing lost or doubled',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t, true)) return
      await topo.explained(run!.topology, () => etcdMemberCutOff())
    },
  )

  async function etcdMemberCutOff(): Promise<void> {
    const { topology, services } = run!
    const primary = await topology.primary()
    assert.ok(primary, 'the topology has a primary')
    const timeline = (await topo.patroniState(topology, primary)).timeline
    const member = await topo.etcdLeader(topology)
    const other = topology.layout.etcd.map((m) => m.name).find((n) => n !== member.name)!
    const faultRun: FaultRun = await topo.newFaultRun(run!, cleanup, true)
    let watch: ReturnType<typeof watchPrimaries> | undefined
    let heal: () => void = () => undefined
    cleanup.add(() => heal())
    let cut = 0
    let cutAt = 0
    await runChaos({
      name: 'topology: an etcd member cut off',
      bank: faultRun.bank,
      databaseUrl: topology.databaseUrl,
      services: () => services,
      fault: (load) =>
        topo.faultUnderLoad(faultRun, load, async () => {
          watch = watchPrimaries(topology, primary, performance.now())
          faultRun.figures.etcd_term_before = (await topo.etcdStatus(topology, other)).term
          heal = topology.cut(member.name, everyoneBut(topology, member.name))
          cut = performance.now()
          cutAt = Date.now()
        }, () => etcdAwayAndBack(topology, load, faultRun, { member, other, cut, cutAt, heal })),
    })
    const seen = await watch!.stop()
    const now = await topology.primary()
    Object.assign(faultRun.figures, { primary_after: now?.name, ...seen })
    const codes = topo.report('etcd member cut off', faultRun)
    assert.equal(now?.name, primary.name, 'the primary stayed the primary')
    assert.equal((await topo.patroniState(topology, primary)).timeline, timeline,
      'no failover: the timeline is the same')
    assert.equal(seen.new_primary_ms, -1, 'the standby was never seen primary')
    assert.equal(seen.both_primary, 0, 'never two primaries at once (no split brain)')
    assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
    assert.equal(codes['504'] ?? 0, 0, 'every request was answered by the bank')
  }

  /**
   * While etcd member `member` (the leader) is cut off: until the other two have a leader of
   * their own, the cut-off one knows it has none, and the primary's Patroni has renewed its
   * lease through the other two (a lease renewed after the cut runs out more than a ttl after
   * it), and again a ttl later; then the network back, and until the member follows the same
   * leader as the others.
   */
  async function etcdAwayAndBack(topology: Topology, load: TransferLoad, faultRun: FaultRun,
    at: { member: { name: string; id: string }; other: string; cut: number; cutAt: number
      heal: () => void }): Promise<void> {
    const { figures } = faultRun
    const { member, other } = at
    // Unhindered, the load would reach its request budget during the partition.
    const waitUntil = <T>(what: string, check: () => Promise<T | undefined>) =>
      until(what, () => (keepLoadingOn(load), check()), topo.topologyFaultLimits.test_timeout_ms)
    const status = (name: string) => topo.etcdStatus(topology, name)
    await waitUntil('the other members have a new leader', async () => {
      const { leader } = await status(other)
      return (leader !== '0' && leader !== member.id) || undefined
    })
    figures.new_etcd_leader_ms = since(at.cut)
    await waitUntil('the cut-off member knows no leader', async () =>
      (await status(member.name)).leader === '0' || undefined)
    figures.member_leaderless_ms = since(at.cut)
    const ttl = clusterSettings().ttl * 1000
    await waitUntil('the leader lease was renewed after the cut', async () =>
      ((await topo.leaseExpiry(topology, other)) ?? 0) > at.cutAt + ttl || undefined)
    figures.lease_renewed_ms = since(at.cut)
    // Renewed again more than a ttl after the cut: every lease from before it has run out
    // by then, and the primary still holds one.
    await waitUntil('the lease was renewed a ttl after the cut', async () =>
      ((await topo.leaseExpiry(topology, other)) ?? 0) > at.cutAt + 2 * ttl || undefined)
    figures.etcd_term_at_repair = (await status(other)).term
    at.heal()
    const healed = performance.now()
    figures.cut_ms = Math.round(healed - at.cut)
    await waitUntil('the member is back in the cluster', async () => {
      const [back, rest] = await Promise.all([status(member.name), status(other)])
      return (back.leader !== '0' && back.leader === rest.leader) || undefined
    })
    figures.rejoined_ms = since(healed)
    const after_ = await status(other)
    Object.assign(figures, { etcd_term_after: after_.term,
      etcd_leader_after_is_cut_member: after_.leader === member.id })
  }

  test(
    'topology partitions - HAProxy cut off from both bank instances under transfers: they ' +
      'answer 503 while away and serve again by themselves, nothing lost or doubled',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t, true)) return
      await topo.explained(run!.topology, () => haproxyCutOff())
    },
  )

  async function haproxyCutOff(): Promise<void> {
    const { topology, services } = run!
    const faultRun: FaultRun = await topo.newFaultRun(run!, cleanup, true)
    const instances = [0, 1]
    let heal: () => void = () => undefined
    cleanup.add(() => heal())
    let whileAway: Record<string, number> = {}
    await runChaos({
      name: 'topology: HAProxy cut off from the bank instances',
      bank: faultRun.bank,
      databaseUrl: topology.databaseUrl,
      services: () => services,
      fault: async (load) => {
        const before_ = await repliesOf(topology, instances)
        const cut = performance.now()
        heal = topology.cut('haproxy', ['bank1', 'bank2'])
        whileAway = await awayAndBack(topology, faultRun, load, { before_, cut, heal, instances })
      },
    })
    const codes = topo.report('HAProxy cut off from the bank instances', faultRun)
    assert.ok((whileAway['503'] ?? 0) > 0,
      `the instances answered 503 (${JSON.stringify(whileAway)})`)
    assert.equal(whileAway['500'] ?? 0, 0, 'the instances gave no 500')
    assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
    assert.equal(codes['504'] ?? 0, 0, 'every request was answered by the bank')
  }

  // The primary cut off from etcd, HAProxy and the banks but not from its standby is
  // described in docs/operations.md from runs of a version of this file; it is not here
  // while one run in three still found transfers refused with 503 twenty seconds after the
  // cluster was whole again (issue 45 keeps it).
}
