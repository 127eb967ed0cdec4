import fs from 'node:fs'
import { CommanderError } from 'commander'
import { BankApiError } from '../client/transport.ts'
import { JobFailedError } from '../client/job-follow.ts'
import { otherCredential, UsageError } from './cli-context.ts'
import { operatorClient } from './operator-connection.ts'
import { commands, type Command } from './commands.ts'
import type { Args } from './command-spec.ts'
import { withFlagNames } from './flag-names.ts'
import { render, type Format } from './format.ts'
import type { LocalCommand } from './local-command.ts'
import { operatorCreateCommand } from './operator-create.ts'
import { natsInitCommand } from './nats-init.ts'
import { cliProgram, exitCodeOf, withHelpForBareGroups, type CliCommand, type CliOutput } from './program.ts'
import { statusCommand } from './status.ts'
import { screeningLoadCommand } from './screening-load.ts'

// `bank <command>`: calls the service's `ops.` subjects over NATS and prints JSON (or a
// table with --format table). A few commands run locally (local-command.ts).
// Exit codes: 0 done, 1 the bank refused (the error JSON is on stderr), could not be
// reached, or a job it ran for the command failed, 2 a usage mistake, 3 `ledger verify`
// found a mismatch (the report is on stdout).
// bin/bank.js runs `runCli` as a process and exits with its code; the tests call it in
// their own process too, with an environment and an output of their own.

export type { CliOutput } from './program.ts'

const localCommands: LocalCommand[] = [statusCommand, operatorCreateCommand, natsInitCommand,
  screeningLoadCommand]

const processOutput: CliOutput = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  terminal: process.stderr.isTTY === true,
}

/** The CLI's version: the package's. */
const version = (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url),
  'utf8')) as { version: string }).version

/** A mistake on one command's line: reported with that command's usage. */
class CommandLineError extends UsageError {
  constructor(
    message: string,
    readonly command: CliCommand,
  ) {
    super(message)
  }
}

async function main(argv: string[], env: NodeJS.ProcessEnv, out: CliOutput): Promise<number> {
  let code = 0
  const act = async (command: CliCommand, args: Args, format: Format) => {
    const local = localCommands.find((c) => c === command)
    if (local) {
      const outcome = await local.run(args, env).catch((error: unknown) => {
        throw error instanceof UsageError ? new CommandLineError(error.message, command) : error
      })
      out.stdout(render(format === 'table' && outcome.table !== undefined ? outcome.table
        : outcome.result, format))
      for (const warning of outcome.warnings ?? []) out.stderr(`bank: warning: ${warning}\n`)
      return
    }
    const contract = command as Command
    let send: ReturnType<Command['prepare']>
    try {
      send = contract.prepare(args)
    } catch (error) {
      throw error instanceof UsageError ? new CommandLineError(error.message, command) : error
    }
    const client = operatorClient(env)
    try {
      const result =
        await send(client, { stderr: (text) => out.stderr(text), terminal: out.terminal === true })
      out.stdout(render(result, format))
      code = contract.exitCode(result)
    } catch (error) {
      throw error instanceof BankApiError ? withFlagNames(error, contract.spec) : error
    } finally {
      await client.close()
    }
  }
  const program = cliProgram([...commands, ...localCommands], out, act, version)
  try {
    await program.parseAsync(withHelpForBareGroups(program, argv), { from: 'user' })
  } catch (error) {
    if (error instanceof CommanderError) return exitCodeOf(error)
    throw error
  }
  return code
}

/** Runs `bank <argv>` and answers its exit code; every error becomes a message and a code. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env,
    out: CliOutput = processOutput): Promise<number> {
  try {
    return await main(argv, env, out)
  } catch (error) {
    if (error instanceof CommandLineError) {
      const problems = error.message.split('\n').map((line) => `error: ${line}`)
      const usage = [`usage: bank ${error.command.usage}`,
        `(bank ${error.command.words} --help: what each flag takes)`]
      out.stderr(`${[...problems, ...usage].join('\n')}\n`)
      return 2
    }
    if (error instanceof UsageError) {
      out.stderr(`${error.message}\n`)
      return 2
    }
    if (error instanceof JobFailedError) {
      const failed = { error: { type: 'job_failed', message: error.message, job: error.job } }
      out.stderr(`${JSON.stringify(failed, null, 2)}\n`)
      return 1
    }
    if (error instanceof BankApiError) {
      const message = error.code === 401 ? `${error.message}; ${otherCredential}` : error.message
      const body =
        { error: { code: error.code, type: error.type, message, details: error.details } }
      out.stderr(`${JSON.stringify(body, null, 2)}\n`)
      return 1
    }
    out.stderr(`bank: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
}
