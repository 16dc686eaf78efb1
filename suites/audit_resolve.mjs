// Module hooks for a Node audit inspector (suites/<framework>/audit.mjs): a bare import the target's own folder
// cannot resolve (`@mastra/core/workflows` from a file outside any node_modules tree, as the corpus's are) is
// resolved again from the project directory fanin names, whose node_modules holds the framework. Every other
// import resolves as Node would resolve it, so a target inside its own project loads its own packages.
let project;

export async function initialize(data) {
  project = data.project;
}

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    const bare = !/^(\.|\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);
    if (!bare || error?.code !== "ERR_MODULE_NOT_FOUND" || !project) throw error;
    return next(specifier, { ...context, parentURL: project });
  }
}
