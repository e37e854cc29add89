/** See chart.mjs: charts/interlock's files (path under the chart, text), generated from `interlock manifest`. */
export declare function chartFiles(): Promise<Record<string, string>>;
