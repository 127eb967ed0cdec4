import fs from 'node:fs'
import path from 'node:path'
import { businessEntity } from '../../support/fixtures.ts'
import { clientFor, type TestBank } from '../../support/harness.ts'

// The setups a guide's block may name (`<!-- setup: NAME -->`, see guide-blocks.ts): what
// the test makes in the bank before the block runs, the environment its program gets,
// the values its commands' `<placeholders>` are filled from, and for a `ts` block, code
// put around it (a fixture that gives the block a name it uses, such as `ops`).

export interface Prepared {
  /** Environment variables for the block's program. */
  env: Record<string, string>
  /** Values for `<name>` placeholders in the block's commands. */
  values: Record<string, string>
}

/** A program the test started from a block: its output so far, and waiting for a line. */
export interface RunningProgram {
  /** Resolves with the first line of its stdout that contains `text`, now or later. */
  waitFor(text: string): Promise<string>
}

export interface Fixture {
  /** What the fixture gives the block, in the words of a reader of the Markdown. */
  gives: string
  /** Code put before a `ts` block, and after it. */
  prelude?: string
  epilogue?: string
  prepare(tb: TestBank): Promise<Prepared>
  /**
   * For a program that serves until stopped (a receiver): what the test does once it
   * printed the line its `background` marker waits for (`ready`); it is stopped then.
   */
  drive?(tb: TestBank, prepared: Prepared, program: RunningProgram, ready: string): Promise<void>
}

/**
 * Installs `@partner-bank/client` into a run directory's node_modules as this repository's
 * SDK (src/client), so that a guide's `import … from '@partner-bank/client'` runs unchanged,
 * as in a partner's project with the package installed: a package whose entry re-exports
 * src/client/index.ts (tsx compiles it). test/client/guide-snippets.test.ts compiles the
 * same snippets against the packed package itself.
 */
export function installSdkAlias(dir: string, root: string): void {
  const sdk = path.join(dir, 'node_modules/@partner-bank/client')
  fs.mkdirSync(sdk, { recursive: true })
  const manifest = { name: '@partner-bank/client', private: true, type: 'module',
    exports: './index.js' }
  fs.writeFileSync(path.join(sdk, 'package.json'), `${JSON.stringify(manifest)}\n`)
  const entry = JSON.stringify(path.join(root, 'src/client/index.ts'))
  fs.writeFileSync(path.join(sdk, 'index.js'), `export * from ${entry}\n`)
}

/** A partner as the guides' readers have it: created, its root entity approved. */
async function partner(tb: TestBank, deposit = 0): Promise<Prepared> {
  const root = businessEntity()
  const created = await tb.operator.partners.create({
    name: root.name,
    email: root.email,
    registration_number: root.registration_number,
    trading_name: root.trading_name,
  })
  const entity_id = created.root_entity_id
  const { account } = await tb.operator.entities.review({ entity_id, decision: 'approve' })
  const account_id = account!.account_id
  if (deposit > 0) await tb.operator.accounts.deposit({ account_id, amount: deposit, ref: 'guide' })
  const { partner_id, webhook_secret } = created
  const token = created.credential.token
  return {
    env: {
      PARTNER_ID: partner_id, PARTNER_TOKEN: token, WEBHOOK_SECRET: webhook_secret,
      BANK_PARTNER_ID: partner_id, BANK_PARTNER_TOKEN: token, BANK_WEBHOOK_SECRET: webhook_secret,
    },
    values: { partner_id, root_entity_id: entity_id, entity_id, account_id },
  }
}

export const fixtures: Record<string, Fixture> = {
  operator: {
    gives: '`ops`, an OperatorClient of the bank in the current directory (`fromEnv()`)',
    prelude: [
      "import { OperatorClient } from '@partner-bank/client'",
      'const ops = OperatorClient.fromEnv()',
      '',
    ].join('\n'),
    epilogue: 'await ops.close()\n',
    prepare: async () => ({ env: {}, values: {} }),
  },
  partner: {
    gives: 'a partner, its root entity approved: PARTNER_ID, PARTNER_TOKEN, WEBHOOK_SECRET set',
    prepare: (tb) => partner(tb),
  },
  'funded-partner': {
    gives: 'a partner as `partner` gives, its pool account credited R1,000,000.00',
    prepare: (tb) => partner(tb, 100_000_000),
  },
  'webhook-receiver': {
    gives:
      'a partner as `partner` gives, BANK_WEBHOOK_SECRET its secret; once the receiver ' +
      "listens, the partner's endpoint is set to it and a mandate made, whose " +
      '`mandate.active` it must print',
    prepare: (tb) => partner(tb),
    async drive(tb, prepared, program, ready) {
      const port = /\b(\d{2,5})\b/.exec(ready)?.[1]
      if (!port) throw new Error(`the receiver's line names no port: ${ready}`)
      const client = clientFor(tb, prepared.env.PARTNER_ID!, prepared.env.PARTNER_TOKEN!)
      await client.webhooks.setEndpoint({ url: `http://127.0.0.1:${port}/hooks` })
      await client.mandates.create({
        entity_id: prepared.values.entity_id!, mandate_reference: 'GUIDE-WEBHOOK',
        account_holder_name: 'Thandi Nkosi', account_number: '5000000000', account_type: 'cheque',
        branch_code: '250655', max_amount: 50_000, frequency: 'monthly',
      })
      await program.waitFor('mandate.active')
    },
  },
}
