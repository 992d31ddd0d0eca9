"""Metrics of runs (docs/metrics.md, Kopanski & Rzadca 2021, §4.2).

Modules: `summary` (one run's Summary), `tidy` (per original job metrics from any jobs table),
`batsim_csv` (original jobs rebuilt from a real Batsim sub-job `_jobs.csv`, docs/protocol.md), `stats`
(means with 95 % CI, quantiles, tail, letter values, normalisation), `tables` (summary per scope and
policy, per-part means), `figures` (Fig. 3, 5-12), `report` (claims vs measurements).
"""
