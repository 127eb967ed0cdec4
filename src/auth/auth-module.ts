import type { Module } from '../module.ts'

// Credentials: issue, verify, revoke. Its table came with 0001_foundation (operators).
export const authModule: Module = {
  name: 'auth',
}
