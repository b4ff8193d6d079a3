"""The analysis of runs: ``evaluate`` scores an estimate against a run's
ground truth, ``sweep`` runs a scenario over seeds and parameters on a Dask
cluster and evaluates every run.  It reads recordings and starts the
recorder; it never touches the live nodes."""
