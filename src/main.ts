import { run } from './bank-process.ts'

// The bank's program as a deployment runs it (`node src/main.ts`: the Dockerfile, the systemd
// unit): NATS_URL names its server, else it uses the one at nats://127.0.0.1:4222. What it
// does is src/bank-process.ts; `npm start` runs the same with development helpers (dev/start.ts).
run()
