"""Classes of the script that build the graph (a model class with `self.loss`, `self.train_op`).

TF 1.x ran a method's body when it was called on an instance, so a method is read at its
call, with `self` bound to that instance (an `Instance`: its attributes are bound like names):
- state it creates lives on the instance (`self.dense = tf.keras.layers.Dense(...)`, built
  there), so the steps reach it wherever they are defined (`self.dense`, or `model.dense`
  from the module);
- a graph value or a placeholder it stores (`self.loss = ...`, `self.x = tf.placeholder(...)`)
  is a value of the steps, named after the attribute (`loss`, the step argument `x`); the
  session code's `model.loss` / `feed_dict={model.x: ...}` fetch and feed them;
- a local of the method that a step reads later (a learning rate, a variable list) is kept
  on the instance (`self.max_grad_norm = max_grad_norm`): the method's locals are gone by
  the time a step runs;
- a method that runs the session is read as a region (its steps are defined in it);
- a method called on `self` from another method of the same object that is given graph values
  or returns a value (`seq = self.embed(x)`, `self.create_rnn(seq)`) is read inline at that
  call, like a helper (`inline`): its statements in the caller's, `self` the same object; it
  leaves the class when nothing else calls it.
The class keeps one definition of each method, so every call of a method (on every
instance) must read to the same TF 2 text; otherwise it is refused (e.g. instances sharing
variables through `reuse`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.children import children
from codemods.tf2 import arguments, build_time, emit
from codemods.tf2.inline import Rename
from codemods.tf2.interfaces import MethodFrame
from codemods.tf2.model import (AV, HOST, Class, Input, Instance, Mapping, Op, Other, OtherKind, Seq, StateRef, Tensor,
                                holds_tf)
from codemods.tf2.syntax import bound_names, function_locals, names_of, replace_names

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite, Evaluation
    from codemods.tf2.program import Program


class Classes:
    def __init__(self, tr: "Program"):
        self.tr = tr
        self.defs: dict = {}
        self.walked: dict = {}        # (class, method) -> FunctionDef read
        self.inlined_methods: dict = {}  # (class, method) -> calls on `self` read inline
        self.frames: list = []
        self.dropped: dict = {}       # (class, method) -> its parameters gone in TF 2 (the session, graph things)

    @property
    def frame(self) -> Optional[MethodFrame]:
        return self.frames[-1] if self.frames else None

    def define(self, st: cst.ClassDef, out: list) -> None:
        for base in st.bases:
            if not (isinstance(base.value, cst.Name) and base.value.value == "object"):
                if self.tr.names.is_tf(base.value) or any(self.tr.names.is_tf(n) for n in [base.value]):
                    self.tr.refuse(f"class `{st.name.value}` derives from a TensorFlow class: not converted")
        for part in st.body.body:
            if not isinstance(part, cst.FunctionDef) and self.tr.mentions_tf(part):
                self.tr.refuse(f"class `{st.name.value}` makes TensorFlow objects in its body (class attributes, "
                               "made once when the class is defined): not converted", self.tr.line_of(part))
        self.tr.env[st.name.value] = Class(st)
        self.defs[st.name.value] = st
        out.append(st)

    @staticmethod
    def method(cls: Class, name: str) -> Optional[cst.FunctionDef]:
        for m in cls.node.body.body:
            if isinstance(m, cst.FunctionDef) and m.name.value == name:
                return m
        return None

    # -- instances and attributes ------------------------------------------------------------------
    def instantiate(self, site: "CallSite", cls: Class):
        instance = Instance(cls)
        init = self.method(cls, "__init__")
        if init is not None:
            self.walk(instance, init, site, region=False)
        return instance, site.node

    def attribute(self, ev: "Evaluation", instance: Instance, attr: str, node: cst.Attribute) -> tuple:
        if attr in instance.attrs:
            av = instance.attrs[attr]
            if attr in instance.locals:
                ev.uses.add(instance.locals[attr])
                return av, cst.Name(instance.locals[attr])
            if isinstance(av, StateRef):
                ev.uses.add(attr)
            return av, node
        if self.method(instance.cls, attr) is not None:
            return Other(OtherKind.MEMBER, {"of": instance, "attr": attr}), node
        return HOST, node

    def inlined(self, value: cst.BaseExpression) -> Optional[tuple]:
        """(method, call with `self` first) when the statement-level call `value` is read inline: a method
        called on `self` inside another method of the same object, given graph values or returning a value."""
        frame = self.frame
        if frame is None or not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                                 and isinstance(value.func.value, cst.Name)
                                 and value.func.value.value == frame.self_name):
            return None
        fn = self.method(frame.instance.cls, value.func.attr.value)
        info = None if fn is None or fn.decorators else self.tr.functions.analyze(fn)
        if info is None or info.session:
            return None
        graph = self.tr.graph_names()
        given = any(names_of(a.value) & graph or _reads_graph_attr(a.value, frame) for a in value.args)
        returns = any(isinstance(n, cst.Return) and n.value is not None for n in _walk(fn.body))
        graph_work = info.uses_tf or info.creates_state or _reads_graph_attr(fn.body, frame)
        if not (given or returns and graph_work):
            return None
        key = (frame.instance.cls.node.name.value, fn.name.value)
        self.inlined_methods[key] = self.inlined_methods.get(key, 0) + 1
        self.tr.note(f"method `{fn.name.value}` read where `{frame.self_name}.{fn.name.value}(...)` calls it: TF 1.x "
                     "ran its body there")
        return fn, value.with_changes(func=cst.Name(fn.name.value),
                                      args=[cst.Arg(cst.Name(frame.self_name)), *value.args])

    def call_method(self, site: "CallSite") -> tuple:
        instance, name = site.receiver, site.qname[2:]
        fn = self.method(instance.cls, name)
        if fn is None:
            return HOST, site.node
        info = self.tr.functions.analyze(fn)
        graph_attrs = any(isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name)
                          and n.attr.value in instance.attrs and instance.attrs[n.attr.value].graph
                          for n in _walk(fn.body))
        if info.session or arguments.given_session(site):
            self.walk(instance, fn, site, region=True)
            dropped = self.dropped.get((instance.cls.node.name.value, name), set())
            return HOST, arguments.call_without(site, fn, dropped, skip=1)
        elif info.creates_state or info.uses_tf or graph_attrs:
            returned = self.walk(instance, fn, site, region=False)
            if returned is not None and returned.graph:
                site.refuse(f"method `{name}` returns a graph value: methods that compute values for their "
                            "caller are not converted (store it on `self` instead)")
        return HOST, site.node

    # -- reading a method ---------------------------------------------------------------------------
    def walk(self, instance: Instance, fn: cst.FunctionDef, site: "CallSite", region: bool) -> Optional[AV]:
        tr = self.tr
        cname, mname = instance.cls.node.name.value, fn.name.value
        ps = fn.params
        if isinstance(ps.star_arg, cst.Param) or ps.star_kwarg or ps.kwonly_params or not ps.params:
            site.refuse(f"method `{cname}.{mname}` with *args/**kwargs or keyword-only parameters is not converted")
        self_name = ps.params[0].name.value
        env = dict(tr.env)
        for n in function_locals(fn):
            env.pop(n, None)
        env[self_name] = instance
        given = arguments.Given()
        if region:  # it runs the session: given the session, graph things and host state (`arguments`)
            given = arguments.bind(fn, site, function_locals(fn) - {self_name}, bound_names(fn.body), skip=1)
            caller = self.frame
            if self_name in given.roots and not (caller is not None and caller.instance is instance
                                                 and caller.self_name == self_name):
                site.refuse(f"method `{cname}.{mname}` is given `{self_name}.…` of another object than its own "
                            f"`{self_name}`: not converted")
            env.update(given.objects)
            env.update({r: av for r, av in given.roots.items() if av is not None and r != self_name})
            tr.sessions |= given.sessions
        params = [p.name.value for p in ps.params[1:]]
        for k, a in enumerate(site.node.args):
            p = params[k] if a.keyword is None and k < len(params) else (a.keyword.value if a.keyword else None)
            av = site.ev.value_of(a.value)
            if p is None or a.star:
                site.refuse(f"the arguments of `{mname}(...)` are not converted")
            if p in given.keys:
                continue
            if av.graph or isinstance(av, (StateRef, Op, Input)) or isinstance(av, (Seq, Mapping)) and holds_tf(av):
                site.refuse(f"method `{cname}.{mname}` is given a graph value or state as `{p}`: not converted")
            env[p] = av
        saved = (tr.env, tr.region_locals)
        tr.env, tr.region_locals = env, function_locals(fn)
        self.frames.append(MethodFrame(instance, self_name, dict(env), function_locals(fn)))
        body: list = []
        try:
            tr.block([s.visit(Rename(given.substitute, tr)) for s in fn.body.body], body, region=region)
            returned = tr.env.get("__return__")
        finally:
            tr.env, tr.region_locals = saved
            self.frames.pop()
        new = fn.with_changes(body=fn.body.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])]))
        new = arguments.drop_params(new, given.dropped)
        key = (cname, mname)
        if key in self.dropped and self.dropped[key] != given.dropped:
            site.refuse(f"method `{cname}.{mname}` is given the session or graph things at one call and not at "
                        "another: one TF 2 definition cannot do both")
        self.dropped[key] = given.dropped
        if key in self.walked and emit.code(self.walked[key]) != emit.code(new):
            site.refuse(f"method `{cname}.{mname}` reads differently at two calls (e.g. instances sharing variables "
                        "through reuse): one TF 2 definition cannot do both")
        self.walked[key] = new
        tr.note(f"method `{cname}.{mname}` read where it is called: its state is kept on the instance, its values "
                "go into the step functions", site.tr.line)
        return returned

    def assign(self, st, small: cst.Assign, target: cst.Attribute, instance: Instance, out: list) -> None:
        """`self.attr = value`: a value or placeholder → a name of the steps; state → on the instance."""
        tr = self.tr
        attr = target.attr.value
        local = instance.locals.get(attr) or tr.namer.fresh(attr)
        new_small = small.with_changes(targets=[cst.AssignTarget(cst.Name(local))])
        produced: list = []
        tr.assign(st.with_changes(body=[new_small]), new_small, produced)
        av = tr.env.get(local, HOST)
        instance.attrs[attr] = av
        build_time.assigned(instance, attr, small.value if av is HOST else None)
        if av.graph and not isinstance(av, StateRef) or isinstance(av, Op):
            instance.locals[attr] = local
            out.extend(produced)
            return
        tr.env.pop(local, None)
        if isinstance(av, StateRef) and av.state.name == local:
            av.state.ref = target
        out.extend(replace_names(s, {local: target}) for s in produced)

    def assign_tuple(self, st, small: cst.Assign, target, out: list) -> None:
        """`img, self.label = ...`: the attributes become names of the steps (values only);
        `self.a, self.b = a, b` of plain Python values stays as it is."""
        tr = self.tr
        if self._host_only(small.value):
            for e in target.elements:
                v = e.value
                if isinstance(v, cst.Attribute) and isinstance(v.value, cst.Name) and \
                        isinstance(tr.env.get(v.value.value), Instance):
                    tr.env[v.value.value].attrs[v.attr.value] = HOST
                else:
                    tr.bind(v, HOST)
            out.extend(tr.pending)
            tr.pending = []
            out.append(st)
            return
        elements, attrs = [], []
        for e in target.elements:
            v = e.value
            if isinstance(v, cst.Attribute) and isinstance(v.value, cst.Name) and \
                    isinstance(tr.env.get(v.value.value), Instance):
                instance = tr.env[v.value.value]
                local = instance.locals.get(v.attr.value) or tr.namer.fresh(v.attr.value)
                attrs.append((instance, v.attr.value, local))
                e = e.with_changes(value=cst.Name(local))
            elements.append(e)
        new_small = small.with_changes(targets=[cst.AssignTarget(target.with_changes(elements=elements))])
        produced: list = []
        tr.assign(st.with_changes(body=[new_small]), new_small, produced)
        for instance, attr, local in attrs:
            av = tr.env.get(local, HOST)
            if not (av.graph and not isinstance(av, StateRef)):
                tr.refuse(f"`self.{attr}` is unpacked from something other than graph values: not converted")
            instance.attrs[attr] = av
            instance.locals[attr] = local
        out.extend(produced)

    def _host_only(self, node) -> bool:
        """`node` reads plain Python values only: no TensorFlow, no call (it could make state), no name or
        object attribute bound to a graph value, state or model object (an object's plain attributes are)."""
        if self.tr.mentions_tf(node):
            return False
        receivers = set()
        for n in _walk(node):
            if isinstance(n, cst.Call):
                return False
            if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and \
                    isinstance(self.tr.env.get(n.value.value), Instance):
                receivers.add(id(n.value))
                if self.tr.env[n.value.value].attrs.get(n.attr.value, HOST) is not HOST:
                    return False
        return all(self.tr.env.get(n.value, HOST) is HOST or id(n) in receivers
                   for n in _walk(node) if isinstance(n, cst.Name))

    # -- state and values made inside a method ------------------------------------------------------
    def state_ref(self, name: str) -> Optional[cst.BaseExpression]:
        """Inside a method, state lives on the instance: `self.<name>`."""
        frame = self.frame
        if frame is None:
            return None
        base = self.tr.namer.preferred.get(name, name)  # per instance: the name asked for, made unique there
        attr, i = base, 2
        while attr in frame.instance.attrs:
            attr, i = f"{base}_{i}", i + 1
        return cst.Attribute(cst.Name(frame.self_name), cst.Name(attr))

    def promote(self, body: list) -> tuple:
        """A value statement made inside a method reads the method's locals: they are kept on the
        instance (`self.<local> = <local>`, made now) and the statement reads them there."""
        frame = self.frame
        if frame is None:
            return body, None
        body = build_time.attributes(self.tr, body, frame.instance, frame.self_name)
        read = names_of(cst.Module(body=body))
        graph = {n for c in self.tr.comps for n in c.defs} | set(self.tr.placeholders)
        graph |= {n for s in body for n in bound_names(s)}  # the statement's own (`grads, tvars = ...`)
        mapping = {}
        for n in sorted(read - graph):
            av = self.tr.env.get(n)
            if n == frame.self_name or av is None or n not in frame.locals | set(self.tr.env) - set(frame.start_env):
                continue
            if isinstance(av, (Tensor, Input, Op)):
                continue
            if n not in frame.promoted:
                attr = n
                while attr in frame.instance.attrs:
                    attr = attr + "_"
                ref = cst.Attribute(cst.Name(frame.self_name), cst.Name(attr))
                frame.promoted[n] = ref
                frame.instance.attrs[attr] = av
                self.tr.pending.append(emit.assign(ref, cst.Name(n)))
            mapping[n] = frame.promoted[n]
        return [replace_names(s, mapping) for s in body], frame

    def rebase(self, state, expr: cst.BaseExpression) -> cst.BaseExpression:
        """`expr` (an expression reaching `state`, written inside its owner's method as `self....`)
        as the code where the translator is now: the same in that method, else through the name
        bound to the owner."""
        owner = state.info.get("owner")
        if owner is None:
            return expr
        instance, self_name = owner
        target = self.instance_expr(instance, self_name)
        if isinstance(target, cst.Name) and target.value == self_name:
            return expr
        return replace_names(expr, {self_name: target})

    def instance_expr(self, instance: Instance, self_name: str) -> cst.BaseExpression:
        """How the step being made refers to `instance`: `self` inside its methods, else the name bound to it."""
        frame = self.frame
        if frame is not None and frame.instance is instance:
            return cst.Name(frame.self_name)
        for n, av in self.tr.env.items():
            if av is instance:
                return cst.Name(n)
        self.tr.refuse(f"a step function reads state of a `{instance.cls.node.name.value}` instance that is not bound "
                       "to a name where the step is defined")

    def finish(self, out: list) -> list:
        new = []
        for st in out:
            if isinstance(st, cst.ClassDef) and self.defs.get(st.name.value) is st:
                body = []
                for m in st.body.body:
                    key = (st.name.value, m.name.value) if isinstance(m, cst.FunctionDef) else None
                    if key in self.walked:
                        body.append(self.walked[key].with_changes(leading_lines=m.leading_lines))
                    elif key in self.inlined_methods and \
                            self.inlined_methods[key] == _attribute_count(self.tr.module, key[1]):
                        continue  # read where it was called, and called nowhere else
                    else:
                        body.append(m)
                st = st.with_changes(body=st.body.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])]))
            new.append(st)
        return new


def _attribute_count(module: cst.Module, attr: str) -> int:
    """How many times `module` reads `<something>.<attr>` (a method's calls, and any other use)."""
    return sum(1 for n in _walk(module) if isinstance(n, cst.Attribute) and n.attr.value == attr)


def _reads_graph_attr(node, frame: MethodFrame) -> bool:
    """`node` reads `self.<attr>` holding a graph value."""
    return any(isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == frame.self_name
               and n.attr.value in frame.instance.attrs and frame.instance.attrs[n.attr.value].graph
               for n in _walk(node))


def _walk(node):
    yield node
    for child in children(node):
        yield from _walk(child)


__all__ = ["Classes"]
