import fs from 'node:fs'
import net from 'node:net'
import tls from 'node:tls'
import { credsAuthenticator } from '@nats-io/transport-node'

// NATS's client protocol spoken by hand, for a hostile client no library would be: one that
// ignores the largest message the server advertised and announces a bigger one.

export interface RawLogin {
  port: number
  /** The CA of the server's TLS certificate (`bank nats init`'s ca.pem). */
  caFile: string
  /** A creds file the bank issued. */
  creds: string
}

/**
 * Logs in over TLS with the creds, then announces a message of `size` bytes on `subject`
 * (`PUB`, without its bytes): the server's INFO replies after login, and its answer to the
 * announcement (`-ERR 'Maximum Payload Violation'` past the account's limit).
 */
export async function announceMessage(account: RawLogin, subject: string,
    size: number): Promise<{ advertised: Array<{ max_payload?: number }>; answer: string }> {
  const plain = net.connect(account.port, '127.0.0.1')
  // A server that neither answers nor closes is not waited for long.
  plain.setTimeout(10_000, () => plain.destroy())
  const info = JSON.parse((await nextLine(plain)).replace(/^INFO /, '')) as { nonce: string }
  const socket = tls.connect({ socket: plain, ca: fs.readFileSync(account.caFile),
    servername: 'localhost' })
  try {
    const auth = credsAuthenticator(new TextEncoder().encode(account.creds))(info.nonce)
    socket.write(`CONNECT ${JSON.stringify({ ...auth, verbose: false, pedantic: false,
      protocol: 1, headers: true })}\r\nPING\r\n`)
    // The server may send a new INFO (the account's limits) at any time after the login.
    const advertised: Array<{ max_payload?: number }> = []
    const nextAnswer = async () => {
      let line = await nextLine(socket)
      for (; line.startsWith('INFO '); line = await nextLine(socket)) advertised.push(
        JSON.parse(line.slice(5)))
      return line
    }
    const login = await nextAnswer()
    if (login !== 'PONG') throw new Error(`the server refused the login: ${login}`)
    socket.write(`PUB ${subject} ${size}\r\n`)
    return { advertised, answer: await nextAnswer() }
  } finally {
    socket.destroy()
  }
}

/** The next line the server sends (without its CRLF). */
function nextLine(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8')
      const end = text.indexOf('\r\n')
      if (end === -1) return
      socket.off('data', onData)
      socket.off('error', reject)
      socket.off('close', onClose)
      const rest = text.slice(end + 2)
      if (rest) socket.unshift(Buffer.from(rest))
      resolve(text.slice(0, end))
    }
    const onClose = () => reject(new Error(`the server closed the connection${
      text ? ` after: ${text}` : ''}`))
    socket.on('data', onData)
    socket.once('error', reject)
    socket.once('close', onClose)
  })
}
