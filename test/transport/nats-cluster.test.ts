import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node'
import { startBank, type Bank } from '../../src/app.ts'
import { BankClient, OperatorClient } from '../../src/client/index.ts'
import { ManualClock } from '../../src/clock.ts'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/logger.ts'
import { natsConnectOptions } from '../../src/nats/nats-connect.ts'
import { findNatsServerBinary, freePort, startNatsServer, type PrivateNatsServer } from '../../dev/nats-server.ts'
import { businessEntity } from '../support/fixtures.ts'
import { startAuthorityNats } from '../support/authority-nats.ts'
import { leasePglite } from '../support/store-pool.ts'

// Two NATS servers in one cluster, each on `bank nats init`'s configuration included by a
// file of its own with a `cluster` block (docs/operations.md, "Several servers"), the second
// with a store and resolver directory of its own as another machine would have. The bank is
// connected to the first; a partner to the second. What the bank pushes to one server
// reaches the other: the new partner's account (it connects and is served through the
// other server), and a revocation or a suspension (it is cut off there within seconds).

const cleanups: Array<() => Promise<void> | void> = []
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

function clusterConfig(name: string, port: number, routePort: number, otherRoutePort: number,
    own?: string): string {
  return [
    'include ./nats-server.conf',
    `server_name: ${name}`,
    `listen: "127.0.0.1:${port}"`,
    ...(own
      ? [`jetstream { store_dir: ${JSON.stringify(path.join(own, 'jetstream'))} }`, `resolver { ` +
        `type: full, dir: ${JSON.stringify(path.join(own, 'resolver'))}, allow_delete: false, ` +
        `interval: "2m", timeout: "5s" }`]
      : []),
    `cluster { name: partner-bank, listen: "127.0.0.1:${routePort}", routes: ["nats-route://127.0.0.1:${otherRoutePort}"] }`,
    '',
  ].join('\n')
}

/**
 * Until `attempt` resolves (bounded by the test's own timeout): the cluster passes changes on by
 * itself.
 */
async function eventually<T>(attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await attempt()
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

function cutOff(nc: NatsConnection): Promise<string> {
  return (async () => {
    for await (const status of nc.status()) if (status.type === 'error'
      || status.type === 'disconnect') return status.type
    return 'closed'
  })()
}

/**
 * The init's server, standalone, gives way to a cluster of two on the same configuration;
 * returns their URLs (the servers are stopped by the cleanups).
 */
async function startCluster(authority: Awaited<ReturnType<typeof startAuthorityNats>>,
  binary: string): Promise<[string, string]> {
  await authority.server.stop()
  const [port1, port2, route1, route2] =
    await Promise.all([freePort(), freePort(), freePort(), freePort()])
  const second = path.join(authority.dir, 'second')
  fs.mkdirSync(second)
  fs.writeFileSync(path.join(authority.dir, 'n1.conf'), clusterConfig('n1', port1, route1, route2))
  fs.writeFileSync(path.join(authority.dir, 'n2.conf'), clusterConfig('n2', port2, route2, route1,
    second))
  const servers: PrivateNatsServer[] = await Promise.all([
    startNatsServer({ binary, storeDir: path.join(authority.dir, 'jetstream'), port: port1,
      configFile: path.join(authority.dir, 'n1.conf') }),
    startNatsServer({ binary, storeDir: path.join(second, 'jetstream'), port: port2,
      configFile: path.join(authority.dir, 'n2.conf') }),
  ])
  cleanups.push(async () => void (await Promise.all(servers.map((s) => s.stop()))))
  return servers.map((s) => s.url) as [string, string]
}

test('nats cluster - a partner onboarded through one server is served through the other; revoking or suspending cuts it off there', async () => {
  const binary = findNatsServerBinary()!
  const store = await leasePglite()
  cleanups.push(() => store.release())
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-cluster-'))
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const base = { BANK_DATA_DIR: dataDir, LOG_LEVEL: 'silent', BANK_CLEARING_SCHEDULE: 'off',
    BANK_DEBIT_SCHEDULE: 'off', BANK_SANDBOX: 'false', BANK_RAIL_DIR: path.join(dataDir, 'rail') }
  const authority = await startAuthorityNats(loadConfig(base), dataDir, { pglite: store.store, pgliteDir: 'memory://' })
  cleanups.push(() => authority.stop())
  const [url1, url2] = await startCluster(authority, binary)
  const tls = natsConnectOptions({ tls: { caFile: authority.caFile } })

  const config =
    loadConfig({ ...base, NATS_CREDS: authority.bankCredsFile, NATS_TLS_CA: authority.caFile })
  const bank: Bank = await startBank({ config, clock: new ManualClock('2026-11-23T08:00:00Z'), log: createLogger('silent'), natsUrl: url1, pgliteDir: 'memory://', pglite: store.store })
  cleanups.push(() => bank.stop())
  const operatorNc =
    await connect({ servers: url1, ...natsConnectOptions(authority.operatorLogin) })
  cleanups.push(() => operatorNc.close())
  const operator = new OperatorClient({ connection: operatorNc, token: bank.bootstrapToken! })

  const root = businessEntity()
  const created = await operator.partners.create({ name: root.name, email: root.email,
    registration_number: root.registration_number, trading_name: root.trading_name })
  assert.ok(created.nats_creds)
  const connectTo = (url: string, creds: string) => connect({ servers: url, reconnect: false,
    ...tls, authenticator: credsAuthenticator(new TextEncoder().encode(creds)) })
  // The account was pushed to the first server; the second learns it from the first.
  const partnerNc = await eventually(() => connectTo(url2, created.nats_creds!))
  cleanups.push(() => partnerNc.close())
  const client = new BankClient({ connection: partnerNc, token: created.credential.token,
    partnerId: created.partner_id })
  // Served by the bank, which is connected to the other server.
  const { entities } = await client.entities.list({})
  assert.ok(entities.some((e) => e.id === created.root_entity_id))

  // A revocation pushed to the first server disconnects the user on the second.
  const extra = await operator.partners.natsCreds({ partner_id: created.partner_id,
    label: 'revoked on n1' })
  const extraNc = await eventually(() => connectTo(url2, extra.creds))
  const extraCut = cutOff(extraNc)
  await operator.partners.natsRevoke({ partner_id: created.partner_id, user_id: extra.id })
  await extraCut
  await assert.rejects(connectTo(url2, extra.creds), /authorization violation/i)

  // A suspension likewise, for every user of the account.
  const partnerCut = cutOff(partnerNc)
  await operator.partners.suspend({ partner_id: created.partner_id })
  await partnerCut
  await assert.rejects(connectTo(url2, created.nats_creds), /authorization violation/i)
  await operator.partners.unsuspend({ partner_id: created.partner_id })
  const back = await eventually(() => connectTo(url2, created.nats_creds!))
  await back.close()
})
