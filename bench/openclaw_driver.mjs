// Times OpenClaw's short-term promotion module on a workspace memcore's bench prepared.
// Usage: node openclaw_driver.mjs MODULE WORKSPACE HITS_JSON RUNS
// Prints one JSON line: median milliseconds of record (10 hits) and rank (every entry).
// The module is a copy of OpenClaw's, given by the caller; it is not part of this project.
// Unverified here (no Node on the machine the bench was written on): it calls the module's
// exported recordShortTermRecalls and rankShortTermPromotionCandidates with their options
// objects and fails with one line if they are missing.
import { pathToFileURL } from "node:url";

const [modulePath, workspaceDir, hitsJson, runsArg] = process.argv.slice(2);
const mod = await import(pathToFileURL(modulePath).href);
for (const name of ["recordShortTermRecalls", "rankShortTermPromotionCandidates"]) {
  if (typeof mod[name] !== "function") {
    console.error(`${modulePath} does not export ${name}`);
    process.exit(2);
  }
}
const hits = JSON.parse(hitsJson).map((h) => ({ ...h, source: "memory" }));
const runs = Number(runsArg) || 5;
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(fn) {
  const out = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return median(out);
}

const record = await time((i) =>
  mod.recordShortTermRecalls({ workspaceDir, query: `query ${i % 7}`, results: hits }),
);
const rankAll = await time(() =>
  mod.rankShortTermPromotionCandidates({
    workspaceDir,
    minScore: 0,
    minRecallCount: 0,
    minUniqueQueries: 0,
    includePromoted: false,
  }),
);
console.log(JSON.stringify({ record, rank_all: rankAll }));
