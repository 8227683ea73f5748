// The contract lives in the node pack (packages/n8n-nodes-convo/nodes/shared), which imports it
// relatively so that the pack's folder builds and lints alone; the runner and the sandbox import
// the same files by this package's name. TypeScript sources: bundled by whoever uses them (the
// runner) or run through tsx (the sandbox).
export * from '../n8n-nodes-convo/nodes/shared';
