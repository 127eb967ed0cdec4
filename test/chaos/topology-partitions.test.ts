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
// Each time nothing acknowledged may be lost or doubled and `ledger verify` must be clean.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { Cleanup, until } = await import('./processes.ts')
  const { runChaos } = await import('./scenario.ts')
  const { leftovers } = await import('../../scripts/topology-netns.ts')
  const { withClient } = await import('../../scripts/topology.ts')
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

  const difference = (after_: Record<string, number>, before_: Record<string, number>) =>
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
        const before_ = await instanceReplies(topology, 1)
        const cut = performance.now()
        heal = topology.cut('bank2', ['haproxy', ...topology.layout.postgres.map((n) => n.name)])
        whileAway = await awayAndBack(topology, faultRun, load, { before_, cut, heal })
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

  /**
   * While bank2 is cut off: until it says it is not ready and the load has had 503s (only
   * bank2 gives them; its /metrics waits on the database too, so it is read after); then
   * the network back, and until bank2 is ready and has served requests again. Its replies
   * from the cut until the repair, by code.
   */
  async function awayAndBack(
    topology: Topology,
    faultRun: FaultRun,
    load: TransferLoad,
    at: { before_: Record<string, number>; cut: number; heal: () => void },
  ): Promise<Record<string, number>> {
    const wait = limits.instance_step_ms
    const codesBefore = new Map(load.codes)
    faultRun.fault = { load, codesBefore }
    await until('bank2 says it is not ready', async () =>
      (await topo.bankReady(topology, 1)) ? undefined : true, wait)
    faultRun.figures.not_ready_ms = since(at.cut)
    const unavailable = () => (load.codes.get('503') ?? 0) - (codesBefore.get('503') ?? 0)
    await until('the load has had 503s',
      () => unavailable() >= limits.load_503_min || undefined, wait)
    faultRun.figures.first_503s_ms = since(at.cut)
    at.heal()
    const healed = performance.now()
    faultRun.figures.cut_ms = Math.round(healed - at.cut)
    await until('bank2 is ready again', async () =>
      (await topo.bankReady(topology, 1)) || undefined, wait)
    faultRun.figures.ready_again_ms = since(healed)
    const atRepair = await until('bank2 answers /metrics', () => instanceReplies(topology, 1), wait)
    await until('bank2 has served a request again', async () =>
      ((difference(await instanceReplies(topology, 1), atRepair)['200'] ?? 0) > 0) || undefined,
      wait)
    faultRun.figures.serving_again_ms = since(healed)
    const away = difference(atRepair, at.before_)
    faultRun.figures.instance_replies_until_ready = away
    return away
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
          await until('the cut-off server has dropped its routes',
            async () => ((await routes(topology, node)) === 0) || undefined, wait)
          faultRun.figures.routes_dropped_ms = since(cut)
          // The third server's view: a route it still holds to the cut-off server.
          faultRun.figures.routes_of_third_at_repair = await routes(topology, peers.at(-1)!)
          heal()
          const healed = performance.now()
          faultRun.figures.cut_ms = Math.round(healed - cut)
          await until('the server is back in the cluster',
            async () => ((await routes(topology, node)) === peers.length) || undefined, wait)
          faultRun.figures.rejoined_ms = since(healed)
          // The partition outlasts the load's own budget (chaosLimits.load_ms): the load
          // goes on long enough to show that the bank serves after the repair.
          load.deadline = Math.max(load.deadline, Date.now() + limits.load_after_repair_ms)
          load.maxRequests = Math.max(load.maxRequests, load.requests + limits.load_after_repair)
        }),
    }).finally(() => (codes = topo.report('NATS server cut off from its peers', faultRun)))
    assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
  }
}
