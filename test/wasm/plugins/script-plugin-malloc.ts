// Entry of the scriptable test plugin that also exports `malloc`: cpp-host must prefer it over
// proxy_on_memory_allocate (§1.1). See runtime.ts.
export * from './runtime';
