// The reference reader of bench/run.sh (issue 21): DuckDB's read_csv on one
// thread scans a tidy trace and sums a column, as a whole process.
//   STALL_DUCKDB_DIR=DIR node bench/duckdb_ref.cjs TRACE.csv
// DIR holds node_modules/@duckdb/node-api (`npm install @duckdb/node-api`
// there); run.sh skips the reference when node or the package is missing.
'use strict';
const dirs = [process.env.STALL_DUCKDB_DIR || process.cwd(), __dirname];
const { DuckDBInstance } = require(require.resolve('@duckdb/node-api', { paths: dirs }));

(async () => {
    const path = process.argv[2];
    const db = await DuckDBInstance.create(':memory:', { threads: '1' });
    const con = await db.connect();
    const q = `SELECT count(*) AS n, sum(fetch_end - fetch_start) AS s FROM read_csv('${path.replace(/'/g, "''")}', header = true)`;
    const r = await con.runAndReadAll(q);
    const row = r.getRowObjects()[0];
    console.log(`${row.n} rows, sum ${row.s}`);
})();
