package bridge

import (
	"fmt"
	"reflect"

	"github.com/cilium/ebpf"
)

// Bind and BindSpec fill a skeleton's structs from their field tags
// (`skelgen:"C name"`), so that a skeleton holds a field per map, program
// and variable and no statement for each: the construction is here, once.
// A field's type says what it holds: a program handle (NewHandle), a typed
// map, reader or variable (its constructor, through its bind method), a
// *ebpf.Map (RawMap). Untagged struct fields (a skeleton's Variables) are
// walked; other untagged fields are left alone.

// binder is a handle type Bind fills: bind returns a new handle of the
// same type for the C name name of s, as its constructor would (the
// receiver is a nil pointer and unused).
type binder interface {
	bind(s *Set, name string) (any, error)
}

// specBinder is a spec type BindSpec fills, as binder.
type specBinder interface {
	bindSpec(spec *ebpf.CollectionSpec, name string) (any, error)
}

// Bind sets the tagged fields of the struct dst points to from s. It
// remembers, in field order, the program handles it set and the
// struct_ops maps: what AttachAll attaches and a Tool may attach.
//
// It is not inlined: its body, inlined into a skeleton, would instantiate
// reflect's generic helpers in every skeleton package.
//
//go:noinline
func Bind(s *Set, dst any) error {
	s.autoProgs, s.autoMaps = nil, nil
	return eachTagged(dst, func(f reflect.Value, name string) error {
		switch t := f.Type(); {
		case isHandle(t):
			if err := NewHandle(s, name, f.Addr().Interface()); err != nil || f.IsNil() {
				return err
			}
			if a, ok := f.Interface().(autoattacher); ok {
				s.autoProgs = append(s.autoProgs, a)
			}
			return nil
		case t == reflect.TypeFor[*ebpf.Map]():
			m, err := RawMap(s, name)
			if err == nil {
				f.Set(reflect.ValueOf(m))
			}
			return err
		}
		b, ok := reflect.Zero(f.Type()).Interface().(binder)
		if !ok {
			return fmt.Errorf("%s: field of type %v: not a handle skelgen binds", name, f.Type())
		}
		v, err := b.bind(s, name)
		if err == nil {
			f.Set(reflect.ValueOf(v))
			if a, ok := v.(*StructOps); ok && a != nil {
				s.autoMaps = append(s.autoMaps, a)
			}
		}
		return err
	})
}

// BindSpec sets the tagged fields of the struct dst points to from spec.
// It is not inlined, as Bind.
//
//go:noinline
func BindSpec(spec *ebpf.CollectionSpec, dst any) error {
	return eachTagged(dst, func(f reflect.Value, name string) error {
		var v any
		var err error
		switch t := f.Type(); t {
		case reflect.TypeFor[*ProgramSpec]():
			v, err = NewProgramSpec(spec, name)
		case reflect.TypeFor[*MapSpec]():
			v, err = NewMapSpec(spec, name)
		case reflect.TypeFor[*RawMapSpec]():
			v, err = NewRawMapSpec(spec, name)
		default:
			b, ok := reflect.Zero(t).Interface().(specBinder)
			if !ok {
				return fmt.Errorf("%s: field of type %v: not a spec skelgen binds", name, t)
			}
			v, err = b.bindSpec(spec, name)
		}
		if err == nil {
			f.Set(reflect.ValueOf(v))
		}
		return err
	})
}

// eachTagged calls set for every field of the struct dst points to that
// has a skelgen tag, walking untagged struct fields.
func eachTagged(dst any, set func(f reflect.Value, name string) error) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("bind into %T: not a pointer to a struct", dst)
	}
	v = v.Elem()
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		name, tagged := sf.Tag.Lookup("skelgen")
		switch {
		case tagged && sf.IsExported():
			if err := set(v.Field(i), name); err != nil {
				return err
			}
		case !tagged && sf.IsExported() && sf.Type.Kind() == reflect.Struct:
			if err := eachTagged(v.Field(i).Addr().Interface(), set); err != nil {
				return err
			}
		}
	}
	return nil
}

// isHandle reports whether t is a program handle's pointer: *Program, or
// a pointer to a struct of one Program (a Tracepoint, an XDP, ...).
func isHandle(t reflect.Type) bool {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	e := t.Elem()
	return e == reflect.TypeFor[Program]() || e.NumField() == 1 && e.Field(0).Anonymous && e.Field(0).Type == reflect.TypeFor[Program]()
}

func (*Map[K, V]) bind(s *Set, name string) (any, error)       { return NewMap[K, V](s, name) }
func (*PerCPUMap[K, V]) bind(s *Set, name string) (any, error) { return NewPerCPUMap[K, V](s, name) }
func (*MapOfMaps[K]) bind(s *Set, name string) (any, error)    { return NewMapOfMaps[K](s, name) }
func (*BloomFilter[V]) bind(s *Set, name string) (any, error)  { return NewBloomFilter[V](s, name) }
func (*RingBuf[E]) bind(s *Set, name string) (any, error)      { return NewRingBuf[E](s, name) }
func (*PerfEventArray[E]) bind(s *Set, name string) (any, error) {
	return NewPerfEventArray[E](s, name)
}
func (*StackTraceMap) bind(s *Set, name string) (any, error) { return NewStackTraceMap(s, name) }
func (*StructOps) bind(s *Set, name string) (any, error)     { return NewStructOps(s, name) }
func (*Var[T]) bind(s *Set, name string) (any, error)        { return NewVar[T](s, name) }

func (*VarSpec[T]) bindSpec(spec *ebpf.CollectionSpec, name string) (any, error) {
	v, err := variableSpec(spec, name, sizeOf[T]())
	return &VarSpec[T]{v}, err
}

// variableSpec returns the variable name of spec, checking its size.
func variableSpec(spec *ebpf.CollectionSpec, name string, size int) (*ebpf.VariableSpec, error) {
	if spec.Variables[name] == nil {
		return nil, fmt.Errorf("variable %s: not in the object", name)
	}
	return spec.Variables[name], checkVarSpec(spec.Variables[name], size)
}

func (*StructOpsSpec[V]) bindSpec(spec *ebpf.CollectionSpec, name string) (any, error) {
	return NewStructOpsSpec[V](spec, name)
}
