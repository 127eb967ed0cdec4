import { BankApiError, BankConnectionError, BankSettingError } from '../src/client/index.ts'
import { SandboxRequired, type Print } from './shared.ts'

// `npm run example -- <name>`: runs one example against the bank this directory's
// `npm start` runs (or the one NATS_URL and BANK_OPERATOR_TOKEN name).

type Example = { main(env: NodeJS.ProcessEnv, print: Print): Promise<unknown> }

const examples: Record<string, { summary: string; load(): Promise<Example> }> = {
  'first-payment': {
    summary: 'onboard a partner and a customer, fund them, pay an EFT and see it settle', load: () => import('./first-payment.ts') },
  'bulk-batch': {
    summary: 'a bulk batch confirmed with its one-time PIN, its webhooks checked by a local receiver', load: () => import('./bulk-batch.ts') },
  'debit-order': {
    summary: 'a mandate and a monthly debit order, collected month after month on the sandbox clock', load: () => import('./debit-order.ts') },
  'card-spend': {
    summary: 'a virtual card approved by a second user pays, is declined, cleared and refunded',
    load: () => import('./card-spend.ts'),
  },
}

const name = process.argv[2]
const example = name === undefined ? undefined : examples[name]
if (!example) {
  const list = Object.entries(examples).map(
    ([key, { summary }]) => `  ${key.padEnd(14)} ${summary}`)
  process.stderr.write(`${name ? `no example named "${name}"\n\n` : ''}usage: npm run example -- ` +
    `<name>\n\n${list.join('\n')}\n`)
  process.exitCode = 2
} else {
  try {
    await (await example.load()).main(process.env, console.log)
  } catch (error) {
    process.exitCode = 1
    // Nothing found, nothing answering: a setting to fix or a bank to start, not a fault of
    // the example's; the message names the setting and the URL tried.
    const unreachable = error instanceof BankSettingError || error instanceof BankConnectionError
      || (error instanceof BankApiError && (error.code === 503 || error.code === 504))
    if (error instanceof SandboxRequired) {
      process.stderr.write(`${error.message}\n`)
    } else if (unreachable) {
      process.stderr.write(`${error.message}\nIs the bank running? Start it with \`npm start\` ` +
        `in this directory, in another terminal.\n`)
    } else if (error instanceof BankApiError) {
      process.stderr.write(`the bank ` +
        `refused: ${error.code} ${error.type}: ${error.message} ${JSON.stringify(error.details)}\n`)
    } else {
      throw error
    }
  }
}
