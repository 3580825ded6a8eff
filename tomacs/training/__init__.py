"""Training: REINFORCE for every learned method, the `Trainer` record a method names (`core.Trainer`), and the
epoch bookkeeping every trainer shares. A method that learns otherwise brings its own trainer in its own
package (G-Safeguard's supervised detector: tomacs/extras/gsafeguard/trainer.py)."""
