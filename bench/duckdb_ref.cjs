// The reference reader of bench/run.sh (issue 21): DuckDB's read_csv on one
// thread scans a tidy trace and sums a column, as a whole process.
//   STALL_DUCKDB_DIR=DIR node bench/duckdb_ref.cjs TRACE.csv
//   STALL_DUCKDB_DIR=DIR node bench/duckdb_ref.cjs FILE.csv 'SQL EXPR' [FILE.csv 'SQL EXPR' ...]
// The second form (a notebook trace: its files one after the other, in one
// process) sums the expression over each file's rows, e.g. the perf file's
// "Iteration time (sec)".
// DIR holds node_modules/@duckdb/node-api (`npm install @duckdb/node-api`
// there); run.sh skips the reference when node or the package is missing.
'use strict';
const dirs = [process.env.STALL_DUCKDB_DIR || process.cwd(), __dirname];
const { DuckDBInstance } = require(require.resolve('@duckdb/node-api', { paths: dirs }));

(async () => {
    const args = process.argv.slice(2);
    if (args.length === 1)
        args.push('fetch_end - fetch_start');
    const db = await DuckDBInstance.create(':memory:', { threads: '1' });
    const con = await db.connect();
    for (let i = 0; i + 1 < args.length; i += 2) {
        const path = args[i], expr = args[i + 1];
        const q = `SELECT count(*) AS n, sum(${expr}) AS s FROM read_csv('${path.replace(/'/g, "''")}', header = true)`;
        const r = await con.runAndReadAll(q);
        const row = r.getRowObjects()[0];
        console.log(`${path}: ${row.n} rows, sum ${row.s}`);
    }
})();
