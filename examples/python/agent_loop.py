#!/usr/bin/env python3
"""An agent drives monet through a minimal gym-style environment over an experiment's [space]: the state is a
design point, an action moves one gene one value up or down, the reward is how much the point's scalarised cost
(objectives over the configured point's, summed; an infeasible point costs its violation more) went down. The
agent here is a greedy one with random exploration, to show the loop; a reinforcement-learning agent would use
the same reset()/step().

    PYTHONPATH=build/python /usr/bin/python3 examples/python/agent_loop.py \
        --experiment experiments/search/edge_tpu_hw_sweep.toml --steps 100
"""
import argparse
import random

import monet


class DesignEnv:
    """reset() -> observation; step(action) -> (observation, reward, done, info). An observation is the point (gene
    name -> value); an action is (gene number, +1 or -1)."""

    def __init__(self, experiment, max_steps):
        self.experiment = experiment
        self.max_steps = max_steps
        self.base = experiment.evaluate({})  # the configured point: the scale of every objective
        self.actions = [(g, d) for g in range(len(experiment.space)) for d in (-1, 1)]

    def cost(self, evaluation):
        total = 0.0
        for o in self.experiment.objectives:
            ratio = evaluation[o["key"]] / self.base[o["key"]]
            total += 1.0 / ratio if o["maximise"] else ratio
        return total + (0.0 if evaluation["feasible"] else 10.0 + evaluation["violation"])

    def observation(self):
        return {g["name"]: g["choices"][i] for g, i in zip(self.experiment.space, self.state)}

    def reset(self):
        self.state = [g["choices"].index(g["configured"]) for g in self.experiment.space]
        self.steps = 0
        self.current = self.cost(self.base)
        return self.observation()

    def step(self, action):
        gene, direction = action
        size = len(self.experiment.space[gene]["choices"])
        self.state[gene] = min(size - 1, max(0, self.state[gene] + direction))
        evaluation = self.experiment.evaluate(self.observation())
        cost = self.cost(evaluation)
        reward, self.current = self.current - cost, cost
        self.steps += 1
        return self.observation(), reward, self.steps >= self.max_steps, evaluation


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiment", default="experiments/search/edge_tpu_hw_sweep.toml")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--explore", type=float, default=0.2, help="probability of a random action")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    env = DesignEnv(monet.Experiment(args.experiment), args.steps)
    point = env.reset()
    best = (env.current, dict(point), env.base)
    print(f"start  cost {env.current:.4f}  {point}")
    done = False
    while not done:
        if rng.random() < args.explore:
            action = rng.choice(env.actions)
        else:  # greedy: the action whose neighbour costs least (evaluated, not stepped into)
            def neighbour_cost(a):
                state = list(env.state)
                g, d = a
                state[g] = min(len(env.experiment.space[g]["choices"]) - 1, max(0, state[g] + d))
                p = {s["name"]: s["choices"][i] for s, i in zip(env.experiment.space, state)}
                return env.cost(env.experiment.evaluate(p))
            action = min(env.actions, key=neighbour_cost)
        point, reward, done, evaluation = env.step(action)
        if env.current < best[0]:
            best = (env.current, dict(point), evaluation)
    cost, point, evaluation = best
    print(f"best   cost {cost:.4f}  {point}")
    print("       " + ", ".join(f"{o['key']} {evaluation[o['key']]:.6g}" for o in env.experiment.objectives)
          + f", feasible {evaluation['feasible']}")


if __name__ == "__main__":
    main()
