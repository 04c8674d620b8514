/* wrl/client.h: hand-written (not generated). Microsoft::WRL::ComPtr<T>, the smart pointer that
 * Direct3D code on Windows holds every interface in, written from its documented behaviour: it owns
 * one reference to the interface it points to, takes one (AddRef) when it copies a pointer, and gives
 * it back (Release) when it lets go. Where the documentation leaves a case open (As or CopyTo on an
 * empty ComPtr), this returns E_POINTER instead of calling through a null pointer.
 *
 * Two differences from WRL's ComPtr: operator-> returns T * itself, so p->Release() compiles here
 * (WRL hides AddRef and Release behind it); and the WinRT members (AsWeak, IInspectable) are absent. */
#ifndef DXCL_WRL_CLIENT_H_
#define DXCL_WRL_CLIENT_H_

#ifndef __cplusplus
#error "<wrl/client.h> is C++ only"
#endif

#include <unknwn.h>

#include <cstddef>
#include <type_traits>

namespace Microsoft {
namespace WRL {

template <typename T> class ComPtr;

namespace Details {

/* What &ptr returns. ptr has already released its interface (as the documentation says operator&
 * does), so the proxy stands for an empty ComPtr about to receive one: it converts to T ** and
 * void ** for out parameters, to ComPtr<T> * for As, and *proxy gives the interface for __uuidof. */
template <typename T> class ComPtrRef {
  public:
    explicit ComPtrRef(ComPtr<T> *ptr) noexcept : ptr_(ptr) {}
    operator ComPtr<T> *() const noexcept { return ptr_; }
    operator T **() const noexcept { return ptr_->ReleaseAndGetAddressOf(); }
    operator void **() const noexcept { return reinterpret_cast<void **>(ptr_->ReleaseAndGetAddressOf()); }
    T *operator*() const noexcept { return ptr_->Get(); }
    T *const *GetAddressOf() const noexcept { return ptr_->GetAddressOf(); }
    T **ReleaseAndGetAddressOf() const noexcept { return ptr_->ReleaseAndGetAddressOf(); }

  private:
    ComPtr<T> *ptr_;
};

/* IID_PPV_ARGS(&ptr) (dxcl/win_types.h) calls dxcl_ppv_arg unqualified; argument-dependent lookup
 * finds this overload for the proxy. */
template <typename T> inline void **dxcl_ppv_arg(ComPtrRef<T> ref) noexcept
{
    return ref;
}

} // namespace Details

template <typename T> class ComPtr {
    /* The converting members take U only where U * converts to T * implicitly (U derives from T). */
    template <typename U>
    using EnableIfConvertible = typename std::enable_if<std::is_convertible<U *, T *>::value, int>::type;

    /* The "unspecified bool type": converts to bool in conditions and initialisations, but not to
     * an integer, and cannot be compared with other ComPtr types by accident. */
    struct BoolStruct {
        int Member;
    };
    typedef int BoolStruct::*BoolType;

  public:
    typedef T InterfaceType;

    ComPtr() noexcept = default;
    ComPtr(std::nullptr_t) noexcept {}
    template <typename U, EnableIfConvertible<U> = 0> ComPtr(U *other) noexcept : ptr_(other)
    {
        InternalAddRef();
    }
    ComPtr(const ComPtr &other) noexcept : ptr_(other.ptr_) { InternalAddRef(); }
    template <typename U, EnableIfConvertible<U> = 0> ComPtr(const ComPtr<U> &other) noexcept : ptr_(other.Get())
    {
        InternalAddRef();
    }
    ComPtr(ComPtr &&other) noexcept : ptr_(other.Detach()) {}
    template <typename U, EnableIfConvertible<U> = 0> ComPtr(ComPtr<U> &&other) noexcept : ptr_(other.Detach()) {}
    ~ComPtr() { InternalRelease(); }

    /* Every assignment builds the new value first and swaps it in, so the new interface is AddRef'd
     * before the old one is released: assigning a ComPtr to itself (or the pointer it holds) is safe. */
    ComPtr &operator=(std::nullptr_t) noexcept
    {
        InternalRelease();
        return *this;
    }
    template <typename U, EnableIfConvertible<U> = 0> ComPtr &operator=(U *other) noexcept
    {
        ComPtr(other).Swap(*this);
        return *this;
    }
    ComPtr &operator=(const ComPtr &other) noexcept
    {
        ComPtr(other).Swap(*this);
        return *this;
    }
    template <typename U, EnableIfConvertible<U> = 0> ComPtr &operator=(const ComPtr<U> &other) noexcept
    {
        ComPtr(other).Swap(*this);
        return *this;
    }
    ComPtr &operator=(ComPtr &&other) noexcept
    {
        ComPtr(static_cast<ComPtr &&>(other)).Swap(*this);
        return *this;
    }
    template <typename U, EnableIfConvertible<U> = 0> ComPtr &operator=(ComPtr<U> &&other) noexcept
    {
        ComPtr(static_cast<ComPtr<U> &&>(other)).Swap(*this);
        return *this;
    }

    void Swap(ComPtr &other) noexcept
    {
        T *tmp = ptr_;
        ptr_ = other.ptr_;
        other.ptr_ = tmp;
    }
    void Swap(ComPtr &&other) noexcept { Swap(other); }

    operator BoolType() const noexcept { return ptr_ ? &BoolStruct::Member : nullptr; }

    T *operator->() const noexcept { return ptr_; }
    /* Releases the interface first: &p is for out parameters, which overwrite the pointer. */
    Details::ComPtrRef<T> operator&() noexcept
    {
        InternalRelease();
        return Details::ComPtrRef<T>(this);
    }

    T *Get() const noexcept { return ptr_; }
    T *const *GetAddressOf() const noexcept { return &ptr_; }
    T **GetAddressOf() noexcept { return &ptr_; }
    T **ReleaseAndGetAddressOf() noexcept
    {
        InternalRelease();
        return &ptr_;
    }

    /* Takes over a reference the caller owns (no AddRef); releases the one held before. */
    void Attach(T *other) noexcept
    {
        T *old = ptr_;
        ptr_ = other;
        if (old)
            old->Release();
    }
    /* Gives the caller the reference (no Release) and empties this ComPtr. */
    T *Detach() noexcept
    {
        T *p = ptr_;
        ptr_ = nullptr;
        return p;
    }
    /* Releases the interface; returns what Release returned (0 when empty). */
    unsigned long Reset() noexcept { return InternalRelease(); }

    /* A new reference to the same interface, through AddRef. */
    HRESULT CopyTo(T **ptr) const noexcept
    {
        InternalAddRef();
        *ptr = ptr_;
        return S_OK;
    }
    /* A reference to another interface of the object, through QueryInterface. */
    HRESULT CopyTo(REFIID riid, void **ptr) const noexcept
    {
        if (!ptr_) {
            *ptr = nullptr;
            return E_POINTER;
        }
        return ptr_->QueryInterface(riid, ptr);
    }
    template <typename U> HRESULT CopyTo(U **ptr) const noexcept
    {
        return CopyTo(__uuidof(U), reinterpret_cast<void **>(ptr));
    }

    /* QueryInterface for U into p, which releases what it held first; on failure p is empty. */
    template <typename U> HRESULT As(ComPtr<U> *p) const noexcept
    {
        return CopyTo(__uuidof(U), reinterpret_cast<void **>(p->ReleaseAndGetAddressOf()));
    }
    template <typename U> HRESULT As(Details::ComPtrRef<U> p) const noexcept
    {
        return As(static_cast<ComPtr<U> *>(p));
    }
    HRESULT AsIID(REFIID riid, ComPtr<IUnknown> *p) const noexcept
    {
        return CopyTo(riid, reinterpret_cast<void **>(p->ReleaseAndGetAddressOf()));
    }

  protected:
    T *ptr_ = nullptr;

    void InternalAddRef() const noexcept
    {
        if (ptr_)
            ptr_->AddRef();
    }
    /* Empties ptr_ before calling Release, so that code Release runs (a destructor) never sees this
     * ComPtr still pointing at the object. */
    unsigned long InternalRelease() noexcept
    {
        T *p = ptr_;
        if (!p)
            return 0;
        ptr_ = nullptr;
        return p->Release();
    }

    template <typename U> friend class ComPtr;
};

/* Comparisons compare the interface pointers: with another ComPtr, a raw pointer or nullptr. */
template <typename T, typename U> inline bool operator==(const ComPtr<T> &a, const ComPtr<U> &b) noexcept
{
    return a.Get() == b.Get();
}
template <typename T, typename U> inline bool operator!=(const ComPtr<T> &a, const ComPtr<U> &b) noexcept
{
    return a.Get() != b.Get();
}
template <typename T, typename U> inline bool operator<(const ComPtr<T> &a, const ComPtr<U> &b) noexcept
{
    return a.Get() < b.Get();
}
template <typename T, typename U> inline bool operator==(const ComPtr<T> &a, U *b) noexcept
{
    return a.Get() == b;
}
template <typename T, typename U> inline bool operator==(U *a, const ComPtr<T> &b) noexcept
{
    return a == b.Get();
}
template <typename T, typename U> inline bool operator!=(const ComPtr<T> &a, U *b) noexcept
{
    return a.Get() != b;
}
template <typename T, typename U> inline bool operator!=(U *a, const ComPtr<T> &b) noexcept
{
    return a != b.Get();
}
template <typename T> inline bool operator==(const ComPtr<T> &a, std::nullptr_t) noexcept
{
    return a.Get() == nullptr;
}
template <typename T> inline bool operator==(std::nullptr_t, const ComPtr<T> &a) noexcept
{
    return a.Get() == nullptr;
}
template <typename T> inline bool operator!=(const ComPtr<T> &a, std::nullptr_t) noexcept
{
    return a.Get() != nullptr;
}
template <typename T> inline bool operator!=(std::nullptr_t, const ComPtr<T> &a) noexcept
{
    return a.Get() != nullptr;
}

} // namespace WRL
} // namespace Microsoft

#endif /* DXCL_WRL_CLIENT_H_ */
