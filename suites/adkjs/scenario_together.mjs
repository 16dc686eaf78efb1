// Why ADK JS's scenario adapter does not name `together` (docs/ADAPTERS.md), read from what the cell installs: two
// runs at once on one session, each through its own DatabaseSessionService on one SQLite file, need the service
// (from 0.6.1), its MikroORM driver (@mikro-orm/sqlite, an optional peer) and that driver's sqlite3 native binding.
import { createRequire } from "node:module";
import { join } from "node:path";
import * as adk from "@google/adk";

const DRIVER = "@mikro-orm/sqlite"; // MikroORM's SQLite driver, an optional peer dependency of @google/adk

// Why this cell cannot run two session services on one database; the last reason where it has all three.
export function noSharedStore() {
  if (!("DatabaseSessionService" in adk)) {
    const services = Object.keys(adk).filter((name) => name.endsWith("SessionService")).sort();
    return {
      together: `@google/adk exports no DatabaseSessionService (its session services: ${services.join(", ")}): none opens a local database two service objects could share (InMemorySessionService keeps sessions in the object)`,
    };
  }
  const need = createRequire(join(process.cwd(), "package.json"));
  try {
    need.resolve(DRIVER);
  } catch {
    return {
      together: `DatabaseSessionService needs a MikroORM driver for a local database (${DRIVER}, an optional peer dependency of @google/adk), which this cell's lock does not install`,
    };
  }
  try {
    need("sqlite3");
  } catch (error) {
    // Cells install with `npm ci --ignore-scripts` (fanin.run.node_cell): sqlite3's install script, which fetches a
    // prebuilt binding from GitHub or compiles one, never runs, and this machine reaches no host but the registries.
    return {
      together: `${DRIVER} opens SQLite through sqlite3, whose native binding is not built in this cell (its install script does not run under npm ci --ignore-scripts): ${String(error?.message ?? error).split("\n")[0].replace(/\. Tried:$/, "")}`,
    };
  }
  // With sqlite3's binding built by hand (outside a cell), two runs each on their own DatabaseSessionService on one
  // file did not overlap: run 2's branches never reached the gate while run 1's waited (vacuous in all three orders).
  return {
    together: "not built yet: with sqlite3's binding compiled by hand outside a cell, two runs each on their own DatabaseSessionService (given MikroORM's SqliteDriver: a sqlite:// URL fails in the ES module build, a dynamic require) on one file did not overlap: run 2's branches never reached the gate while run 1's waited",
  };
}
