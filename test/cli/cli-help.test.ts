import assert from 'node:assert/strict'
import fs from 'node:fs'
import { randomUUID } from 'node:crypto'
import { after, test } from 'node:test'
import { z } from 'zod'
import { commands } from '../../src/cli/commands.ts'
import { moneyField, renderTable } from '../../src/cli/format.ts'
import { oneLine } from '../../src/cli/program.ts'
import { cleanEnv, removeTempDirs, runBank, type BankRun } from './run-bank.ts'

// What `bank` says about itself, and the command-line mistakes it refuses before anything
// is sent: no bank runs here, and NATS points where nothing listens, so a command that got
// as far as the network would exit 1, not 0 or 2.

after(() => removeTempDirs())

const offline = (...args: string[]) => runBank(args, cleanEnv({ NATS_URL: 'nats://127.0.0.1:1', BANK_OPERATOR_TOKEN: `opk_${'A'.repeat(43)}` }))

function usageMistake(run: BankRun): string[] {
  assert.equal(run.code, 2, `exit code; stdout: ${run.stdout} stderr: ${run.stderr}`)
  assert.equal(run.stdout, '')
  return run.stderr.split('\n')
}

const version = (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url),
  'utf8')) as { version: string }).version

test('cli help - bank, bank help, -h and --help print every command with its one-line description, exit 0', async () => {
  const runs = await Promise.all([offline(), offline('help'), offline('-h'), offline('--help')])
  for (const run of runs) {
    assert.equal(run.code, 0)
    assert.equal(run.stderr, '')
    assert.equal(run.stdout, runs[0]!.stdout)
  }
  const lines = runs[0]!.stdout.split('\n')
  assert.equal(lines[0], 'usage: bank <command> [--format json|table]')
  for (const command of commands) {
    const at = lines.indexOf(`  bank ${command.usage}`)
    assert.ok(at > 0, command.usage)
    assert.equal(lines[at + 1], `      ${oneLine(command.summary)}`)
  }
  for (const local of ['  bank status [--service partner-bank] [--endpoints]',
    '  bank operator create [--label L]']) assert.ok(lines.includes(local), local)
})

test('cli help - a group alone, with --help, or after help lists its commands only, exit 0', async () => {
  const runs = await Promise.all([offline('partner'), offline('partner', '--help'),
    offline('partner', '-h'), offline('help', 'partner')])
  for (const run of runs) {
    assert.equal(run.code, 0, run.stderr)
    assert.equal(run.stderr, '')
    assert.equal(run.stdout, runs[0]!.stdout)
  }
  const listed = runs[0]!.stdout.split('\n').filter((line) => line.startsWith('  bank '))
  assert.deepEqual(listed, commands.filter((c) => c.words.startsWith('partner ')).map(
    (c) => `  bank ${c.usage}`))
  assert.match(runs[0]!.stdout, /^usage: bank partner <command>/)
})

test('cli help - every command has --help: its usage, its whole summary and every flag, exit 0', async () => {
  for (const command of commands) {
    const [long, short] = await Promise.all([offline(...command.words.split(' '), '--help'),
      offline(...command.words.split(' '), '-h')])
    assert.equal(long.code, 0, `${command.words}: ${long.stderr}`)
    assert.deepEqual(short, long)
    assert.ok(long.stdout.startsWith(`Usage: bank ${command.usage}\n`), long.stdout)
    assert.ok(long.stdout.replace(/\s+/g, ' ').includes(command.summary), `${command.words} --help leaves out its summary`)
    for (const flag of command.flags) assert.match(long.stdout,
      new RegExp(`\\n  --${flag.word}\\b`), `${command.words} --${flag.word}`)
    for (const positional of command.positionals) assert.match(long.stdout,
      new RegExp(`\\n  ${positional.word} `), `${command.words} <${positional.word}>`)
    assert.match(long.stdout, /--format <format>/)
  }
  const status = await offline('status', '--help')
  assert.equal(status.code, 0)
  assert.match(status.stdout, /no operator credential/)
  const operator = await offline('operator', 'create', '--help')
  assert.equal(operator.code, 0)
  assert.match(operator.stdout.replace(/\s+/g, ' '), /the bank must be stopped first/)
})

test('cli help - --version prints the package version, exit 0', async () => {
  const run = await offline('--version')
  assert.deepEqual(run, { code: 0, stdout: `${version}\n`, stderr: '' })
})

test('cli help - every missing flag and word is reported at once, with the usage, exit 2', async () => {
  const partner = usageMistake(await offline('partner', 'create', '--country', 'ZAF'))
  assert.deepEqual(partner.filter((line) => line.startsWith('error: ')), [
    'error: --name is required',
    'error: --email is required',
    'error: --registration-number is required',
    'error: --trading-name is required',
  ])
  assert.ok(
    partner.includes(`usage: bank ${commands.find((c) => c.words === 'partner create')!.usage}`))

  const deposit = usageMistake(await offline('account', 'deposit'))
  assert.deepEqual(deposit.slice(0, 3), ['error: <account_id> is required',
    'error: <amount_cents> is required',
    'usage: bank account deposit <account_id> <amount_cents> [--ref deposit]'])

  const decide = usageMistake(await offline('kyc', 'decide', '--documents', '{'))
  assert.deepEqual(decide.filter((line) => line.startsWith('error: ')), [
    'error: <user_id> is required',
    'error: give exactly one of --approve and --reject',
    'error: --documents must be JSON',
  ])

  // A flag left without its value does not swallow the next flag.
  const swallowed = usageMistake(await offline('partner', 'create', '--name', '--email',
    'a@b.example', '--registration-number', '2020/123456/07', '--trading-name', 'T'))
  assert.deepEqual(swallowed.filter((line) => line.startsWith('error: ')),
    ['error: --name is required'])
  const extra = usageMistake(await offline('credential', 'revoke', randomUUID(), 'extra'))
  assert.match(extra[0]!, /"extra" is one too many/)
})

test('cli help - unknown flags, unknown --format values and extra words are refused, exit 2', async () => {
  const typo = usageMistake(await offline('account', 'deposit', randomUUID(), '100', '--reff',
    'typo'))
  assert.equal(typo[0], "error: unknown option '--reff'")
  assert.equal(typo[1], '(Did you mean --ref?)')
  assert.equal(typo[2], 'usage: bank account deposit <account_id> <amount_cents> [--ref deposit]')
  assert.match(usageMistake(await offline('partner', 'list', '--bogus'))[0]!, /unknown option '--bogus'/)
  assert.match(usageMistake(await offline('partner', 'list', '--format', 'xml'))[0]!, /'xml' is invalid\. Allowed choices are json, table/)
  assert.match(usageMistake(await offline('status', '--verbose'))[0]!, /unknown option '--verbose'/)
  assert.deepEqual(usageMistake(await offline('status', '--service')).slice(0, 2),
    ['error: --service needs a value', 'usage: bank status [--service partner-bank] [--endpoints]'])
  assert.deepEqual(usageMistake(await offline('status', '--endpoints=all')).slice(0, 2),
    ["error: unknown option '--endpoints=all'",
      'usage: bank status [--service partner-bank] [--endpoints]'])
  assert.deepEqual(usageMistake(await offline('operator', 'create', '--label')).slice(0, 2),
    ['error: --label needs a value', 'usage: bank operator create [--label L]'])
})

test('cli help - --format table writes plain values as key/value lines and each list of records as a table', () => {
  const text = renderTable({
    entity_id: 'e-1',
    metadata: { currency: 'ZAR' },
    accounts: [
      { account_id: 'a-1', balance: '1500', note: 'x'.repeat(60) },
      { account_id: 'a-22', balance: '7', extra: { nested: true }, never: '' },
    ],
    problems: [],
  })
  assert.equal(
    text,
    [
      'entity_id          e-1',
      'metadata.currency  ZAR',
      '',
      'accounts (2):',
      'account_id  balance  note                                              extra',
      '----------  -------  ------------------------------------------------  ---------------',
      `a-1          R15.00  ${'x'.repeat(47)}…`,
      'a-22          R0.07                                                    {"nested":true}',
      '',
      'problems: none',
      '',
    ].join('\n'),
  )
})

test('cli help - --format table shows money in rand, as the console does; counts and ids stay as they are', () => {
  const text = renderTable({
    balance: '123456789',
    available_balance: '-50',
    money: { balance_total: '100000', pending_eft_count: 3 },
    total: 2,
    payments: [
      { tx_id: '1000', amount: '150000', fee: '250', held: 0, reason: 'x' },
      { tx_id: '2', amount: '5', fee: '0', held: 12345, reason: null },
    ],
    hold: { amount: 'n/a' },
  })
  assert.equal(
    text,
    [
      'balance                  R1,234,567.89',
      'available_balance        -R0.50',
      'money.balance_total      R1,000.00',
      'money.pending_eft_count  3',
      'total                    2',
      'hold.amount              n/a',
      '',
      'payments (2):',
      'tx_id     amount    fee     held  reason',
      '-----  ---------  -----  -------  ------',
      '1000   R1,500.00  R2.50    R0.00  x',
      '2          R0.05  R0.00  R123.45',
      '',
    ].join('\n'),
  )
})

test('cli help - the money fields --format table shows in rand are these fields of the ops. replies', () => {
  const matched = new Set<string>()
  const walk = (schema: JsonSchema, key: string) => {
    for (const [name, inner] of Object.entries(schema.properties ?? {})) walk(inner, name)
    if (schema.items) walk(schema.items, key)
    for (const inner of [...schema.anyOf ?? [], ...schema.oneOf ?? []]) walk(inner, key)
    const type = [schema.type].flat()
    if (moneyField(key) && (type.includes('string') || type.includes('number'))) matched.add(key)
  }
  for (const command of commands) walk(z.toJSONSchema(command.operation.response,
    { io: 'output', unrepresentable: 'any' }) as JsonSchema, '')
  // A new money field is added here (and to moneyField when its name is new); a field that
  // is not money must not be matched.
  assert.deepEqual([...matched].sort(), ['amount', 'available_balance', 'available_total',
    'balance', 'balance_total', 'closing_balance', 'control_sum', 'credit', 'credits_sum', 'debit',
    'debits_sum', 'fee', 'fee_income_today', 'fees', 'held', 'held_at_end', 'held_total',
    'ledger_amount', 'opening_balance', 'pending_eft_amount', 'postings_total',
    'running_balance', 'statement_amount', 'sum'])
})

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>;
  items?: JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[] }
