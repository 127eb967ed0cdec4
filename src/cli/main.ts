import { BankApiError } from '../client/transport.ts'
import { OperatorClient } from '../client/operator-client.ts'
import { natsUrl, operatorToken, UsageError } from './cli-context.ts'
import { commands, parseArgs } from './commands.ts'

// `bank <command>`: calls the service's `ops.` subjects over NATS and prints JSON.
// Exit codes: 0 done, 1 the bank refused (the error JSON is on stderr), 2 a usage mistake,
// 3 `ledger verify` found a mismatch (the report is on stdout).

function help(): string {
  const lines = commands.flatMap((c) => [`  bank ${c.usage}`, `      ${c.summary}`])
  return ['usage: bank <command>', '', ...lines, ''].join('\n')
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help') {
    process.stdout.write(help())
    return 0
  }
  const { command, args } = parseArgs(argv)
  if (!command) {
    process.stderr.write(`unknown command: ${argv.join(' ')}\n\n${help()}`)
    return 2
  }
  const client = new OperatorClient({ servers: natsUrl(), token: operatorToken(), timeoutMs: 15_000 })
  try {
    const result = await command.run(client, args)
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
    return command.exitCode(result)
  } finally {
    await client.close()
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`)
      process.exit(2)
    }
    if (error instanceof BankApiError) {
      process.stderr.write(`${JSON.stringify({ error: { code: error.code, type: error.type, message: error.message, details: error.details } }, null, 2)}\n`)
      process.exit(1)
    }
    process.stderr.write(`bank: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  },
)
