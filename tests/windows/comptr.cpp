// Microsoft::WRL::ComPtr (<wrl/client.h>) against a COM object that counts its references: after every
// operation the count must be exactly what the documented behaviour gives, and every object must be
// destroyed by the end (valgrind reports a leak or a use after free where a count is off by one).
// Also <windows.h>'s C++ side (min/max next to the standard library, GUID helpers). Built with
// -Wall -Wextra -Werror against the installed headers and run under valgrind by `make test-c`.
#include <windows.h>
#include <wrl/client.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

using Microsoft::WRL::ComPtr;

static int passed, failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);          \
        }                                                                                          \
    } while (0)

// Three interfaces the object implements (IFooEx derives from IFoo) and one it does not (IBaz).
struct IFoo : public IUnknown {
    STDMETHOD_(int, Foo)() PURE;
};
struct IFooEx : public IFoo {
    STDMETHOD_(int, FooEx)() PURE;
};
struct IBar : public IUnknown {
    STDMETHOD_(int, Bar)() PURE;
};
struct IBaz : public IUnknown {
    STDMETHOD_(int, Baz)() PURE;
};
extern "C++" {
DXCL_DEFINE_UUIDOF(IFoo, 0x3a1c0f10, 0x7b2e, 0x4c11, 0x9a, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01)
DXCL_DEFINE_UUIDOF(IFooEx, 0x3a1c0f10, 0x7b2e, 0x4c11, 0x9a, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02)
DXCL_DEFINE_UUIDOF(IBar, 0x3a1c0f10, 0x7b2e, 0x4c11, 0x9a, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03)
DXCL_DEFINE_UUIDOF(IBaz, 0x3a1c0f10, 0x7b2e, 0x4c11, 0x9a, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04)
}

// What an object did, kept outside it so that it can be read after the object is gone.
struct Counts {
    ULONG refs = 1; // the creator's reference
    int addrefs = 0, releases = 0, queries = 0;
    bool destroyed = false;
};

// Called from the destructor: what the ComPtr being emptied held at that moment.
static ComPtr<IFoo> *watched;
static IFoo *seen_by_destructor = reinterpret_cast<IFoo *>(1);

class Object final : public IFooEx, public IBar {
  public:
    explicit Object(Counts &c) : c_(c) {}
    ~Object()
    {
        c_.destroyed = true;
        if (watched)
            seen_by_destructor = watched->Get();
    }
    STDMETHODIMP QueryInterface(REFIID riid, void **ppv) override
    {
        c_.queries++;
        if (!ppv)
            return E_POINTER;
        if (IsEqualIID(riid, __uuidof(IUnknown)) || IsEqualIID(riid, __uuidof(IFoo)) ||
            IsEqualIID(riid, __uuidof(IFooEx)))
            *ppv = static_cast<IFooEx *>(this);
        else if (InlineIsEqualGUID(riid, __uuidof(IBar)))
            *ppv = static_cast<IBar *>(this);
        else {
            *ppv = nullptr;
            return E_NOINTERFACE;
        }
        AddRef();
        return S_OK;
    }
    STDMETHODIMP_(ULONG) AddRef() override
    {
        c_.addrefs++;
        return ++c_.refs;
    }
    STDMETHODIMP_(ULONG) Release() override
    {
        c_.releases++;
        const ULONG left = --c_.refs;
        if (left == 0)
            delete this;
        return left;
    }
    STDMETHODIMP_(int) Foo() override { return 1; }
    STDMETHODIMP_(int) FooEx() override { return 2; }
    STDMETHODIMP_(int) Bar() override { return 3; }

  private:
    Counts &c_;
};

static IFooEx *make(Counts &c) { return new Object(c); }

// Conversions follow the interface hierarchy only.
static_assert(std::is_constructible<ComPtr<IFoo>, ComPtr<IFooEx>>::value, "derived to base");
static_assert(std::is_constructible<ComPtr<IUnknown>, const ComPtr<IFoo> &>::value, "to IUnknown");
static_assert(!std::is_constructible<ComPtr<IFooEx>, ComPtr<IFoo>>::value, "no base to derived");
static_assert(!std::is_constructible<ComPtr<IFoo>, ComPtr<IBar>>::value, "no unrelated interfaces");
static_assert(!std::is_constructible<ComPtr<IFoo>, IBar *>::value, "no unrelated raw pointer");
static_assert(!std::is_convertible<ComPtr<IFoo>, int>::value, "the bool type is not an integer");
static_assert(std::is_nothrow_move_constructible<ComPtr<IFoo>>::value, "vectors move, not copy");
static_assert(std::is_same<ComPtr<IBar>::InterfaceType, IBar>::value, "InterfaceType");

static void test_construct()
{
    ComPtr<IFoo> empty;
    ComPtr<IFoo> null(nullptr);
    CHECK(empty.Get() == nullptr && null.Get() == nullptr);
    CHECK(empty.Reset() == 0);

    Counts c;
    IFooEx *raw = make(c);
    {
        ComPtr<IFooEx> a(raw); // AddRef
        CHECK(c.refs == 2 && a.Get() == raw);
        ComPtr<IFooEx> b(a); // copy: AddRef
        CHECK(c.refs == 3 && b.Get() == raw && a.Get() == raw);
        ComPtr<IFooEx> m(std::move(b)); // move: no count change, source empty
        CHECK(c.refs == 3 && m.Get() == raw && b.Get() == nullptr);
        ComPtr<IFoo> up(a); // converting copy: AddRef
        CHECK(c.refs == 4 && up.Get() == static_cast<IFoo *>(raw));
        ComPtr<IFoo> upm(std::move(m)); // converting move: no change
        CHECK(c.refs == 4 && upm.Get() == static_cast<IFoo *>(raw) && m.Get() == nullptr);
        ComPtr<IUnknown> unk = up; // implicit conversion to IUnknown
        CHECK(c.refs == 5);
        ComPtr<IFoo> from_raw = raw; // implicit from a derived raw pointer
        CHECK(c.refs == 6);
    } // five ComPtrs released
    CHECK(c.refs == 1 && c.addrefs == 5 && c.releases == 5 && !c.destroyed);
    raw->Release();
    CHECK(c.destroyed && c.queries == 0);
}

static void test_assign()
{
    Counts c1, c2;
    ComPtr<IFooEx> a, b;
    a.Attach(make(c1));
    b.Attach(make(c2));
    CHECK(c1.refs == 1 && c2.refs == 1);

    a = b; // copy: new AddRef'd, old released (and destroyed)
    CHECK(c1.destroyed && c2.refs == 2 && a.Get() == b.Get());
    a = a; // self-assignment keeps the count
    CHECK(c2.refs == 2 && a.Get() == b.Get());
    a = a.Get(); // assigning the pointer it holds
    CHECK(c2.refs == 2 && a);
    a = nullptr;
    CHECK(c2.refs == 1 && !a);

    Counts c3;
    a.Attach(make(c3));
    ComPtr<IFoo> base;
    base = a; // converting copy assignment
    CHECK(c3.refs == 2 && base.Get() == static_cast<IFoo *>(a.Get()));
    base = b.Get(); // raw pointer: AddRef new, release old
    CHECK(c3.refs == 1 && c2.refs == 2);
    base = std::move(a); // converting move: old (c2) released, c3 moved without count change
    CHECK(c3.refs == 1 && c2.refs == 1 && !a && base);
    ComPtr<IFoo> other;
    other = std::move(base); // move assignment
    CHECK(c3.refs == 1 && !base && other);
    ComPtr<IFoo> &alias = other;
    other = std::move(alias); // self-move keeps the object
    CHECK(c3.refs == 1 && other);
    other = nullptr;
    CHECK(c3.destroyed);

    // Assigning the pointer a sole owner holds: AddRef before Release, or the object dies on the way.
    Counts c4;
    ComPtr<IFoo> sole;
    sole.Attach(make(c4));
    sole = sole.Get();
    CHECK(c4.refs == 1 && !c4.destroyed && sole->Foo() == 1);
    sole = sole;
    CHECK(c4.refs == 1 && !c4.destroyed);
    sole.Reset();
    CHECK(c4.destroyed);
    b.Reset();
    CHECK(c2.destroyed);
}

static void test_attach_detach_reset()
{
    Counts c;
    ComPtr<IFooEx> p;
    IFooEx *raw = make(c);
    p.Attach(raw); // takes the creator's reference: no AddRef
    CHECK(c.refs == 1 && c.addrefs == 0 && p.Get() == raw);
    IFooEx *got = p.Detach(); // hands it back: no Release
    CHECK(got == raw && !p && c.refs == 1 && c.releases == 0);
    p.Attach(got);
    raw->AddRef();
    CHECK(p.Reset() == 1); // Reset returns what Release returned
    CHECK(!p && c.refs == 1);
    p.Attach(raw);
    Counts c2;
    p.Attach(make(c2)); // Attach over a held interface releases it
    CHECK(c.destroyed && c2.refs == 1);
    CHECK(p.Reset() == 0 && c2.destroyed);
    CHECK(p.Reset() == 0); // empty
}

static void test_as()
{
    Counts c;
    ComPtr<IFoo> foo;
    foo.Attach(make(c));

    ComPtr<IBar> bar;
    CHECK(SUCCEEDED(foo.As(&bar))); // through operator&'s proxy
    CHECK(c.refs == 2 && bar && bar->Bar() == 3);
    ComPtr<IFooEx> ex;
    CHECK(foo.As(&ex) == S_OK && c.refs == 3 && ex->FooEx() == 2);
    CHECK(foo.As(&ex) == S_OK); // the target's interface is released before it is refilled
    CHECK(c.refs == 3 && c.releases == 1);

    ComPtr<IFooEx> direct; // the ComPtr<U> * overload
    CHECK(foo.As(std::addressof(direct)) == S_OK && c.refs == 4 && direct);
    CHECK(foo.As(std::addressof(direct)) == S_OK && c.refs == 4);

    // Failure: E_NOINTERFACE, the target empty, no reference taken.
    ComPtr<IBaz> baz;
    CHECK(foo.As(&baz) == E_NOINTERFACE && !baz && c.refs == 4);
    CHECK(FAILED(foo.As(std::addressof(baz))) && !baz && c.refs == 4);

    // AsIID into a ComPtr<IUnknown>; COM identity makes both routes give the same pointer.
    ComPtr<IUnknown> unk;
    CHECK(foo.AsIID(__uuidof(IUnknown), &unk) == S_OK && c.refs == 5);
    ComPtr<IUnknown> unk2;
    CHECK(bar.As(&unk2) == S_OK && unk2 == unk && c.refs == 6);
    // A failing AsIID still releases what the target held.
    CHECK(foo.AsIID(__uuidof(IBaz), &unk2) == E_NOINTERFACE && !unk2 && c.refs == 5);

    // On an empty ComPtr: E_POINTER, and the target is emptied all the same.
    ComPtr<IFoo> none;
    CHECK(none.As(&unk) == E_POINTER && !unk && c.refs == 4);

    bar.Reset();
    ex.Reset();
    direct.Reset();
    CHECK(c.refs == 1 && !c.destroyed);
    foo.Reset();
    CHECK(c.destroyed);
}

static void test_copy_to()
{
    Counts c;
    ComPtr<IFooEx> p;
    p.Attach(make(c));

    IFooEx *same = nullptr;
    CHECK(p.CopyTo(&same) == S_OK && same == p.Get() && c.refs == 2); // AddRef, no QueryInterface
    CHECK(c.queries == 0);
    same->Release();

    IBar *bar = nullptr;
    CHECK(p.CopyTo(&bar) == S_OK && bar && c.refs == 2 && c.queries == 1); // U ** overload
    bar->Release();
    void *v = nullptr;
    CHECK(p.CopyTo(__uuidof(IBar), &v) == S_OK && v == static_cast<void *>(static_cast<IBar *>(static_cast<Object *>(p.Get()))));
    CHECK(c.refs == 2);
    static_cast<IBar *>(v)->Release();
    IBaz *baz = reinterpret_cast<IBaz *>(1);
    CHECK(p.CopyTo(&baz) == E_NOINTERFACE && baz == nullptr && c.refs == 1);

    ComPtr<IFooEx> target;
    CHECK(p.CopyTo(&target) == S_OK && target == p && c.refs == 2); // &target converts to IFooEx **
    target.Reset();

    ComPtr<IFooEx> none;
    IFooEx *out = reinterpret_cast<IFooEx *>(1);
    CHECK(none.CopyTo(&out) == S_OK && out == nullptr); // copying nothing gives nothing
    void *vout = &out;
    CHECK(none.CopyTo(__uuidof(IFoo), &vout) == E_POINTER && vout == nullptr);
    CHECK(c.refs == 1);
}

static void test_addresses()
{
    Counts c1, c2;
    ComPtr<IFooEx> p;
    p.Attach(make(c1));

    IFooEx **addr = p.GetAddressOf(); // no release
    CHECK(*addr == p.Get() && c1.refs == 1 && !c1.destroyed);
    const ComPtr<IFooEx> &cp = p;
    CHECK(cp.GetAddressOf() == addr);

    IFooEx **again = p.ReleaseAndGetAddressOf(); // releases first
    CHECK(again == addr && c1.destroyed && *again == nullptr);
    *again = make(c2); // an out parameter stores an owned reference
    CHECK(c2.refs == 1 && p && p->Foo() == 1);

    // operator& also releases; the proxy converts to T ** and void **.
    IFooEx **through_amp = &p;
    CHECK(c2.destroyed && through_amp == addr && !p);
    Counts c2b;
    p.Attach(make(c2b));
    ComPtr<IFooEx> *self = &p; // even when the proxy is only turned back into the ComPtr's address
    CHECK(self == std::addressof(p) && c2b.destroyed && !p);

    Counts c3;
    ComPtr<IFoo> src;
    src.Attach(make(c3));
    CHECK(src->QueryInterface(IID_PPV_ARGS(&p)) == S_OK && p && c3.refs == 2); // IID_PPV_ARGS(&ComPtr)
    ComPtr<IBar> bar;
    CHECK(src->QueryInterface(IID_PPV_ARGS(bar.ReleaseAndGetAddressOf())) == S_OK && bar->Bar() == 3);
    CHECK(c3.refs == 3);
    CHECK(src->QueryInterface(__uuidof(IBar), &bar) == S_OK && c3.refs == 3); // &bar as void **: released, refilled
    ComPtr<IBaz> baz;
    CHECK(src->QueryInterface(IID_PPV_ARGS(&baz)) == E_NOINTERFACE && !baz && c3.refs == 3);
    CHECK(__uuidof(*src.Get()) == __uuidof(IFoo));
    p.Reset();
    bar.Reset();
    src.Reset();
    CHECK(c3.destroyed);
}

static void test_swap_and_compare()
{
    Counts c1, c2;
    {
        ComPtr<IFooEx> a, b;
        a.Attach(make(c1));
        b.Attach(make(c2));
        IFooEx *ra = a.Get(), *rb = b.Get();

        a.Swap(b); // exchanges the pointers, touches no count
        CHECK(a.Get() == rb && b.Get() == ra && c1.refs == 1 && c2.refs == 1);
        a.Swap(std::move(b));
        CHECK(a.Get() == ra && b.Get() == rb && c1.refs == 1 && c2.refs == 1);
        ComPtr<IFooEx> two = std::move(b);
        b = a;
        std::swap(a, b); // through the move operations
        CHECK(a.Get() == ra && b.Get() == ra && c1.refs == 2 && c2.refs == 1);

        ComPtr<IFoo> base = a;
        ComPtr<IFooEx> empty;
        CHECK(a == b && !(a != b));
        CHECK(a != two && !(a == two));
        CHECK(base == a && a == base && base != two); // different ComPtr types, same object
        CHECK(a == ra && ra == a && a != rb && rb != a); // raw pointers, either side
        CHECK(base == static_cast<IFoo *>(ra));
        CHECK(empty == nullptr && nullptr == empty && a != nullptr && nullptr != a);
        CHECK((a < two) == (ra < rb) && !(a < b) && !(b < a));

        // The bool conversion: conditions, negation, initialisation.
        bool full = a;
        bool none = empty;
        CHECK(full && !none);
        CHECK(!empty && (a ? 1 : 0) == 1);

        // Ordered containers use operator<; a and b are one element.
        std::set<ComPtr<IFooEx>> set{a, b, two, empty};
        CHECK(set.size() == 3 && c1.refs == 4 && c2.refs == 2);
        set.clear();
        CHECK(c1.refs == 3 && c2.refs == 1);
    }
    CHECK(c1.destroyed && c2.destroyed);
}

static void test_containers_and_release_order()
{
    Counts c;
    IFooEx *raw = make(c);
    {
        std::vector<ComPtr<IFoo>> v;
        for (int i = 0; i < 40; i++) // reallocations move the elements: no extra references
            v.push_back(raw);
        CHECK(c.refs == 41 && c.addrefs == 40);
        v.erase(v.begin(), v.begin() + 10);
        CHECK(c.refs == 31);
    }
    CHECK(c.refs == 1);

    // The ComPtr is empty by the time Release runs the object's destructor.
    ComPtr<IFoo> last;
    last.Attach(raw);
    watched = std::addressof(last); // &last would release it: operator& is for out parameters
    last.Reset();
    watched = nullptr;
    CHECK(c.destroyed && seen_by_destructor == nullptr);
}

// <windows.h> from C++: min and max are templates, so standard headers included before and after it
// (this file includes <set>, <vector>, <limits> after it) keep std::min, std::max and
// numeric_limits<T>::max() working, and mixed argument types give the common type as the macros do.
static void test_windows_h_in_cpp()
{
    CHECK(max(2, 5L) == 5L && min(-1.5, 2) == -1.5 && max(7u, 3u) == 7u);
    static_assert(std::is_same<decltype(max(1, 2L)), long>::value, "common type");
    static_assert(max(3, 4) == 4, "usable in constant expressions");
    CHECK(std::max(1, 2) == 2 && std::numeric_limits<int>::max() == 2147483647);
    const int counts[] = {1, 2, 3};
    CHECK(_countof(counts) == 3 && ARRAYSIZE(counts) == 3);
    CHECK(IsEqualGUID(__uuidof(IFoo), __uuidof(IFoo)) && !InlineIsEqualGUID(__uuidof(IFoo), __uuidof(IBar)));
    CHECK(__uuidof(IUnknown) == IID_IUnknown && IsEqualIID(IID_NULL, GUID_NULL));
    CHECK(HRESULT_FROM_WIN32(ERROR_INVALID_PARAMETER) == E_INVALIDARG && FAILED(E_NOINTERFACE));
}

int main()
{
    test_windows_h_in_cpp();
    test_construct();
    test_assign();
    test_attach_detach_reset();
    test_as();
    test_copy_to();
    test_addresses();
    test_swap_and_compare();
    test_containers_and_release_order();
    std::printf("comptr: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
