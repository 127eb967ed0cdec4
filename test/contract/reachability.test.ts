import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { BankClient, CardNetworkClient, OperatorClient } from '../../src/client/index.ts'
import { commands, parseArgs, type Command } from '../../src/cli/commands.ts'
import { allOperations, scopeOf, subjectFor, type Operation } from '../../src/contract/index.ts'
import { testNats } from '../support/harness.ts'
import { runBank, cleanEnv, removeTempDirs } from '../cli/run-bank.ts'

// The contract is the only list of operations; the SDK and the CLI are derived from it.
// These tests prove the derivation complete without naming a single operation: every SDK
// method and every CLI command is called against a real NATS server whose only responder
// records the subject it was sent to, and the recorded subjects must be exactly the
// contract's. No bank runs here: what is checked is where each call goes.

interface Received {
  subject: string
  body: Record<string, unknown>
}

let nc: NatsConnection
let received: Received[] = []
const partnerId = randomUUID()

before(async () => {
  const nats = await testNats()
  nc = await connect({ servers: nats.url })
  for (const filter of ['svc.>', 'ops.>', 'net.>']) {
    nc.subscribe(filter, {
      callback: (_error, msg) => {
        received.push(
          { subject: msg.subject, body: JSON.parse(new TextDecoder().decode(msg.data)) })
        msg.respond('{}')
      },
    })
  }
  await nc.flush()
})
after(async () => {
  await nc.close()
  await (await testNats()).stop()
  removeTempDirs()
})

/** Stands for the entity an `<entity_id>` subject names (each call below names its own). */
const anyEntity = 'ENTITY'

/** The subject a partner's or an operator's call to `op` is sent to. */
function expectedSubject(op: Operation): string {
  if (op.permission === 'operator') return subjectFor(op)
  return subjectFor(op, scopeOf(op) === 'entity' ? anyEntity : partnerId)
}

/** SDK methods made of other calls (src/client/uploads.ts), not operations of their own. */
const clientSideHelpers = ['kyc.uploadDocuments', 'kyb.uploadDocuments']

/** Calls `send` and returns the subjects of the requests it made. */
async function subjectsOf(send: () => Promise<unknown>): Promise<Received[]> {
  received = []
  await send()
  return received
}

type Groups = Record<string, Record<string, (request?: unknown) => Promise<unknown>>>

/** Every `client.<group>.<method>` the object offers, found by walking it. */
function methodsOf(client: object): Array<[string, (request?: unknown) => Promise<unknown>]> {
  return Object.entries(client as Groups)
    .filter(([, group]) => typeof group === 'object' && group !== null && !Array.isArray(group))
    .flatMap(([name, group]) =>
      Object.entries(group)
        .filter(([, method]) => typeof method === 'function')
        .map(([method, fn]): [string, (request?: unknown) => Promise<unknown>] => [
          `${name}.${method}`, fn]),
    )
}

test('contract - every operation is reachable from the SDK, and every SDK method sends to one operation', async () => {
  const bank = new BankClient({ connection: nc, token: 'pbk_test', partnerId })
  const operator = new OperatorClient({ connection: nc, token: 'opk_test' })
  const network = new CardNetworkClient({ connection: nc, token: 'cnk_test' })
  const reached = new Map<string, string>()
  for (const [client, label] of [[bank, 'bank'], [operator, 'operator'],
      [network, 'card network']] as const) {
    const methods = methodsOf(client)
    assert.ok(methods.length > 0, `${label} has no methods`)
    for (const [path, method] of methods) {
      // The uploads are the SDK's own helpers, not operations: they check the files, put
      // them into the dropbox and then call users.uploadKycDocuments or kyb.submit, which are
      // reached here directly (test/client/client-uploads.test.ts runs them end to end).
      if (label === 'bank' && clientSideHelpers.includes(path)) continue
      const body = { entity_id: randomUUID(), probe: path }
      const sent = await subjectsOf(() => method(body))
      assert.equal(sent.length, 1, `${label}.${path} sent ${sent.length} requests`)
      assert.deepEqual(sent[0]!.body, body, `${label}.${path} must send its request as given`)
      // An `<entity_id>` subject carries the request's entity.
      const subject = sent[0]!.subject.replace(`.${body.entity_id}.`, `.${anyEntity}.`)
      assert.ok(!reached.has(subject),
        `${label}.${path} and ${reached.get(subject)} both send to ${subject}`)
      reached.set(subject, `${label}.${path}`)
    }
  }
  const operations = allOperations()
  assert.deepEqual(
    operations.map(expectedSubject).filter((subject) => !reached.has(subject)),
    [],
    'operations no SDK method reaches',
  )
  assert.equal(reached.size, operations.length,
    'an SDK method reaches a subject that is not an operation')
})

/**
 * A command line for `command` built from its own description: placeholder values for every word it
 * needs.
 */
function sampleArgv(command: Command): string[] {
  const sample = { string: randomUUID(), integer: '100', number: '1.5', boolean: 'true',
    list: 'a,b', duration: '1h', json: '{}' } as const
  const argv = [...command.words.split(' '), ...command.spec.positionals.map((p) => sample[p.kind])]
  const needed = new Set<string>()
  for (const choice of command.spec.choices) {
    argv.push(`--${choice.options[0]!.flag}`)
    for (const field of choice.options[0]!.requires) needed.add(field)
  }
  for (const flag of command.spec.flags) {
    if (!flag.required && !needed.has(flag.field)) continue
    argv.push(`--${flag.word}`)
    if (flag.kind !== 'boolean') argv.push(sample[flag.kind])
  }
  return argv
}

test('contract - every operator operation is reachable from the CLI, and every command sends to its own operation', async () => {
  const operator = new OperatorClient({ connection: nc, token: 'opk_test' })
  const reached = new Map<string, string>()
  for (const command of commands) {
    const argv = sampleArgv(command)
    const { command: dispatched, args } = parseArgs(argv)
    assert.equal(dispatched, command, `\`bank ${argv.join(' ')}\` dispatches to another command`)
    const sent = await subjectsOf(() => command.run(operator, args))
    assert.equal(sent.length, 1, `bank ${command.words} sent ${sent.length} requests`)
    const { subject, body } = sent[0]!
    assert.ok(!reached.has(subject),
      `bank ${command.words} and bank ${reached.get(subject)} both send to ${subject}`)
    reached.set(subject, command.words)
    const op = allOperations().find((o) => expectedSubject(o) === subject)
    assert.ok(op, `bank ${command.words} sends to ${subject}, which is no operation`)
    // Every field the request schema requires is on the command line.
    const required = (op.request.safeParse({}).error?.issues ?? []).filter(
      (i) => i.code === 'invalid_type').map((i) => String(i.path[0]))
    assert.deepEqual(required.filter((field) => !(field in body)), [],
      `bank ${command.words} leaves out required fields`)
  }
  const operatorOperations = allOperations().filter((op) => op.permission === 'operator')
  assert.deepEqual(
    operatorOperations.map(expectedSubject).filter((subject) => !reached.has(subject)),
    [],
    'operator operations no command reaches',
  )
})

test('contract - bank help lists a usage line for every command', async () => {
  const run = await runBank(['help'], cleanEnv())
  assert.equal(run.code, 0)
  const lines = run.stdout.split('\n')
  for (const command of commands) {
    assert.ok(lines.includes(`  bank ${command.usage}`), `help does not list bank ${command.usage}`)
  }
  assert.equal(commands.length, allOperations().filter((op) => op.permission === 'operator').length)
})
