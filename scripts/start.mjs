// `npm start`: install dependencies if needed, then run the service (TypeScript via tsx)
// with the development helpers of dev/start.ts (a private NATS server when none answers).
import { ensureDependencies } from './ensure-deps.mjs'

ensureDependencies()
const { register } = await import('tsx/esm/api')
register()
await import('../dev/start.ts')
