import { BankApiError } from '../client/transport.ts'
import { OperatorClient } from '../client/operator-client.ts'
import { natsUrl, operatorToken, UsageError } from './cli-context.ts'
import { commands, parseArgs } from './commands.ts'

// `bank <command>`: calls the service's `ops.` subjects over NATS and prints JSON.
// Exit codes: 0 done, 1 the bank refused (the error JSON is on stderr), 2 a usage mistake,
// 3 `ledger verify` found a mismatch (the report is on stdout).
// bin/bank.js runs `runCli` as a process and exits with its code; the tests call it in
// their own process too, with an environment and an output of their own.

/** Where a run writes: the process's stdout and stderr, or a test's buffers. */
export interface CliOutput {
  stdout(text: string): void
  stderr(text: string): void
}

const processOutput: CliOutput = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
}

function help(): string {
  const lines = commands.flatMap((c) => [`  bank ${c.usage}`, `      ${c.summary}`])
  return ['usage: bank <command>', '', ...lines, ''].join('\n')
}

async function main(argv: string[], env: NodeJS.ProcessEnv, out: CliOutput): Promise<number> {
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help') {
    out.stdout(help())
    return 0
  }
  const { command, args } = parseArgs(argv)
  if (!command) {
    out.stderr(`unknown command: ${argv.join(' ')}\n\n${help()}`)
    return 2
  }
  const client = new OperatorClient({ servers: natsUrl(env), token: operatorToken(env), timeoutMs: 15_000 })
  try {
    const result = await command.run(client, args)
    out.stdout(`${JSON.stringify(result, null, 2)}\n`)
    return command.exitCode(result)
  } finally {
    await client.close()
  }
}

/** Runs `bank <argv>` and answers its exit code; every error becomes a message and a code. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env, out: CliOutput = processOutput): Promise<number> {
  try {
    return await main(argv, env, out)
  } catch (error) {
    if (error instanceof UsageError) {
      out.stderr(`${error.message}\n`)
      return 2
    }
    if (error instanceof BankApiError) {
      out.stderr(`${JSON.stringify({ error: { code: error.code, type: error.type, message: error.message, details: error.details } }, null, 2)}\n`)
      return 1
    }
    out.stderr(`bank: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
}
