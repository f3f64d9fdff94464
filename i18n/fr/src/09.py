FR = {}
FR["048d2e2d"] = """# Chapitre 9 — Annulation, persistance et rejeu

**Durée :** environ 50 minutes.

**Prérequis :** les chapitres 6 (le délai) et 7 (statuts et codes de sortie) ; connaître les tâches
`asyncio` de Python aide.

Il reste deux questions. Qui l'emporte quand l'*appelant* abandonne au moment même où l'hôte arrête
l'exécution ? Et que protègent encore les bornes de la boucle quand le processus redémarre et que
la même requête revient ? La seconde demande un autre mécanisme, que ce chapitre construit sur
SQLite.

**Ce que vous saurez faire**

- annuler une exécution du côté de l'appelant, et lire ce que l'appelant et le périmètre
  d'exécution détiennent chacun ensuite ;
- distinguer une annulation de l'appelant d'une annulation levée par le propre client d'un
  fournisseur ;
- prédire ce que fait un délai à un corps d'outil qui ne surveille pas son jeton d'annulation ;
- montrer pourquoi des compteurs propres à une exécution ne peuvent pas empêcher qu'une écriture
  soit rejouée après un redémarrage ;
- construire une décision durable : identifiant d'opération persisté en premier, proposition
  immuable, décision enregistrée, une seule transaction pour l'effet ;
- dire ce que les affirmations de ce cahier ne couvrent pas."""
FR["5f35025a"] = """## L'appelant abandonne

Une cellule de notebook peut exécuter un scénario sous forme de tâche asyncio. Ici, le modèle ne
répond jamais et le délai expire dans cinq secondes, mais l'appelant abandonne avant et annule la
tâche :"""
FR["4655e7a3"] = """L'annulation a atteint le transport qui attendait et est revenue à l'appelant sous la forme de
`CancelledError` ; le périmètre d'exécution n'a enregistré aucune raison d'arrêt, et rien ne l'a
requalifiée en `DeadlineExceeded`. Dans la console, c'est Ctrl+C et le code de sortie 130.

### Prédire : une annulation pendant un appel refusé

Maintenant, une course. Ce modèle demande `read_ticket(42)` deux fois de suite : la garde refuse
donc son deuxième appel. Un middleware placé après celui de labkit annule la tâche de l'appelant
**à cet instant précis**, juste avant que la garde ne refuse. (Un middleware est une fonction
asynchrone `(invocation, call_next)` : il voit chaque appel d'outil que demande le modèle et le
transmet avec `await call_next(invocation)` ; celui-ci annule `caller`, la tâche que lance la
cellule d'exécution ci-dessous, puis transmet l'appel.) Que reçoit l'appelant en retour : une issue
avec le statut `RepeatedCall`, ou `CancelledError` ? Et quelle raison d'arrêt le périmètre
d'exécution garde-t-il dans ce qu'il a lui-même enregistré ?"""
FR["74e1a6ef#hint"] = """Deux choses se produisent au même instant : la garde enregistre son arrêt, et l'appelant demande l'annulation. Laquelle décide de ce que reçoit l'appelant, et l'autre disparaît-elle de ce qui est enregistré ?"""
FR["ch9-race-after"] = """L'appelant l'emporte : il reçoit son annulation, pas une issue. Ce qu'a enregistré le périmètre
d'exécution montre toujours ce qu'a fait la garde : les événements se terminent par l'arrêt
`RepeatedCall` :"""
FR["ch9-provider-intro"] = """## L'annulation interne du fournisseur

Il arrive que l'annulation ne vienne ni de l'appelant ni de l'hôte : la bibliothèque cliente du
fournisseur annule sa propre requête (un pool de connexions qui s'arrête, un délai d'attente propre
au client), et le transport voit exactement l'exception que lève une annulation de l'appelant,
`asyncio.CancelledError`. Ici, cela se produit au premier appel modèle, un instant après le début
de l'exécution ; le délai de l'exécution est de 5 secondes. Que rapporte l'exécution ? Répondez par
`"DeadlineExceeded"`, `"ProviderUnavailable"` ou `"CancelledError"` (levée, sans statut)."""
FR["ch9-provider-predict#hint"] = """Passez les trois réponses en revue et demandez-vous, pour chacune, ce qui aurait dû se produire pour qu'elle soit vraie dans cette exécution. Laquelle de ces choses s'est produite ?"""
FR["ch9-provider-after"] = """L'exécution renvoie une issue, `ProviderUnavailable`. Personne n'a annulé l'exécution et son délai
n'était pas expiré : l'hôte ne peut donc parler ni d'annulation de l'appelant, ni de
`DeadlineExceeded`. C'est le fournisseur qui a abandonné : une défaillance extérieure, que l'hôte
traduit en un statut, comme il le fait pour une connexion impossible à établir. Le périmètre
d'exécution a enregistré le `ModelCall` admis, puis l'arrêt, avec le compte 1 (les appels modèle
admis, y compris celui qui a échoué). Le client de comptage conserve l'erreur qu'il a levée ; la
console l'affiche sur sa ligne `hint:` :"""
FR["d6e39d6b"] = """Aucun des scénarios scriptés du cours ne fait cela : c'est ce que fait la bibliothèque quand un
vrai client se comporte ainsi.

## Un service distant lent

Qu'arrive-t-il à un corps d'outil encore en cours d'exécution quand le délai expire ? Ce corps
synchrone représente un appel distant lent, qui ne répond que lorsque le notebook le libère, dans
une cellule ultérieure. Le corps reçoit le `CancelToken` de l'exécution et ne le regarde jamais."""
FR["stubborn-predict-prompt"] = """Le modèle scripté demande un seul `post_comment` ; l'exécution a un délai de 0,2 s. Prédisez le
statut de l'exécution, et le nombre de commentaires que contient le service distant une fois que le
notebook l'a libéré."""
FR["stubborn-predict#hint"] = """Le corps ne vérifie jamais son jeton, et Python ne peut pas arrêter un thread : quelle limite met fin à l'exécution pendant que le corps attend, et que fait encore le corps une fois libéré ?"""
FR["stubborn-release-prompt"] = """L'exécution a rendu la main, avec son `DeadlineExceeded` (compte 1 : une tentative d'outil avait été
admise). La chronologie place l'arrêt sur la ligne du corps : le délai a expiré pendant que le
corps s'exécutait encore. Maintenant, l'appel lent revient :"""
FR["stubborn-after"] = """L'exécution a renvoyé `DeadlineExceeded` au bout de 0,2 s, sans qu'aucun commentaire soit publié ;
le corps a continué dans son thread et a publié son commentaire après coup. Ni un délai ni une
annulation n'arrêtent un corps d'outil qui ignore son jeton d'annulation : Python ne peut pas tuer
un thread, il n'y a pas de bac à sable, et un délai n'annule pas un effet qui a déjà eu lieu. Un
corps qui doit s'arrêter surveille son jeton (`cancel.cancelled`, `cancel.wait(...)`).

## Les compteurs repartent de zéro à chaque exécution

Le périmètre d'exécution vit le temps d'une exécution. Ses compteurs et ses signatures disparaissent
avec lui : c'est exactement ce qu'il faut pour contrôler la boucle, et exactement ce qu'il ne faut
pas pour une écriture. Voici un outil qui publie un commentaire sur le ticket 42, gardé uniquement
par son périmètre. La même requête s'exécute deux fois, comme après un redémarrage."""
FR["23023596"] = """Deux commentaires. Chaque périmètre a admis son unique tentative ; aucun ne pouvait connaître
l'autre.

## Une décision durable

La version durable du même outil gère une **opération** dans une base SQLite, avant l'effet et
autour de lui :

1. un **identifiant d'opération**, dérivé de l'identifiant de requête de l'appelant et de la
   signature de l'appel, est persisté avec la proposition **avant** toute autre chose ;
2. la **proposition** (les arguments canoniques) est immuable : même identifiant, autres
   arguments → erreur ;
3. la **décision** de l'hôte (approuver ou rejeter, avec une raison) est enregistrée une seule
   fois ;
4. la ligne de l'**effet** et la marque `applied` sont écrites dans **une seule transaction**."""
FR["durable-predict-prompt"] = """Trois exécutions maintenant, chacune avec un nouveau périmètre et une nouvelle connexion à la base,
comme après un redémarrage : la requête `review-42` ; la même requête rejouée après un redémarrage ;
puis l'utilisateur envoie exactement le même commentaire une seconde fois, comme une nouvelle
requête, `review-42-again`. Combien de commentaires sont écrits ?"""
FR["e3e2450d#hint"] = """L'étape 1 dérive l'identifiant d'opération de l'identifiant de requête et de la signature de l'appel : lesquelles des trois exécutions trouvent une opération déjà appliquée, et lesquelles en commencent une nouvelle ?"""
FR["durable-after-check"] = """Deux. Le rejeu de `review-42` a trouvé son opération déjà appliquée et a sauté chaque étape déjà
enregistrée. `review-42-again` a un autre identifiant de requête, donc un autre identifiant
d'opération : une nouvelle opération, décidée et écrite une fois. Le registre des décisions
(`DecisionStore`) ne peut pas distinguer un utilisateur qui veut vraiment le faire deux fois d'une
simple relance : un appelant qui relance doit renvoyer le même identifiant de requête. Le registre
contient deux
opérations (la raison de l'approbation vient de la politique propre à `durable_comment_tool`, qui
n'approuve que les commentaires sur le ticket 42) :"""
FR["1cc35853"] = """## Un plantage entre deux étapes

Supposons que l'hôte plante juste après avoir persisté une proposition, avant de décider. Rien
n'est perdu : l'opération attend dans le registre, et rejouer la requête la termine exactement une
fois. Cette histoire a son propre registre, avec un second commentaire. (Ici, le « plantage »
consiste simplement à s'arrêter après la première étape ; la suite de tests tue un vrai processus
avec `SIGKILL` entre la proposition et la décision, entre la décision et l'effet, et au milieu de la
transaction de l'effet, puis rejoue et compte les effets.)"""
FR["31df1b53"] = """Le même identifiant d'opération avec d'autres arguments est refusé : une proposition ne peut pas
être modifiée après coup."""
FR["6f8e54fe"] = """### Ce que garantit la décision durable, et ce qu'elle ne garantit pas

Pour un effet écrit par l'intermédiaire du registre dans la **même base de données**, chaque point
de plantage laisse zéro ou un effet, et un rejeu termine l'opération : exactement un
effet par identifiant d'opération, sans perte de proposition ni de décision. Un autre identifiant
de requête est une autre opération.

Elle ne peut pas garantir qu'un effet **extérieur** à cette base n'ait lieu qu'une fois : un appel
HTTP ou un e-mail ne peut pas entrer dans la transaction SQLite. Pour ceux-là, il faut que le côté
distant accepte l'identifiant d'opération comme clé d'idempotence. Elle n'authentifie pas qui a
décidé, et elle ne borne pas la boucle : cela reste le travail du périmètre d'exécution.

Les bornes de la boucle, l'autorisation au moment de l'exécution et l'idempotence persistante se
complètent ; aucune ne remplace les autres."""
FR["7e9c0f09"] = """### Facultatif : deux workers, une seule opération

Un hôte devenu trop grand pour une seule machine fait tourner plusieurs processus de traitement
(des *workers*), et deux d'entre eux peuvent prendre en charge la même requête au même moment. Le
registre doit alors tenir bon lui aussi, et chaque résultat doit dire honnêtement ce que *cet*
appel-ci a fait (`decided_now`, `applied_now`).

La politique ci-dessous est la règle d'approbation de l'hôte, passée au registre ; elle note
chaque fois qu'on la consulte. Ces cellules s'exécutent sur SQLite. Pour les exécuter sur
PostgreSQL, la base prévue pour les hôtes répartis sur plusieurs machines, définissez
`LABKIT_POSTGRES_URL` (par exemple `postgresql://you@localhost/labkit`) avant de lancer JupyterLab,
avec `labkit[postgres]` installé : la même API `DecisionStore`, les mêmes garanties."""
FR["865962ea"] = """Deux workers traitent la même opération au même moment, chacun avec sa propre connexion. Combien de
fois la politique est-elle consultée, et combien de commentaires sont écrits ?"""
FR["d082dcce#hint"] = """La décision se prend avec l'opération verrouillée : que trouve le second worker une fois qu'il obtient le verrou ?"""
FR["81c3c1b1"] = """Une fois chacun. Le premier worker à verrouiller l'opération a consulté la politique et enregistré
l'approbation ; l'autre a attendu au verrou et a trouvé la décision enregistrée : pas de second
verdict, pas de `DecisionConflict`. Puis l'un des deux (pas toujours le même) a écrit le
commentaire, et l'autre l'a trouvé écrit et l'a signalé. `settled[0].decided_now`,
`settled[1].applied_now`, etc. disent lequel a fait quoi. Les tests jouent la même course avec
8 processus workers sur 500 opérations, tués à des moments aléatoires puis redémarrés, sur SQLite
et sur PostgreSQL."""
FR["7febfbef"] = """## Ce que ces affirmations ne couvrent pas

- Les **capacités** comme `ticket.read` sont des fixtures accordées par l'hôte, pas des rôles
  authentifiés.
- Les **outils** ne font ici que lire ou modifier la mémoire de l'hôte (et, dans ce chapitre, un
  fichier SQLite local) ; aucun système distant n'est touché.
- Les **compteurs** vivent dans un seul périmètre d'exécution : une nouvelle exécution admet de
  nouveau le même appel.
- Les **modèles scriptés** prouvent l'orchestration, le comptage et l'autorisation. Ils ne disent
  rien de la qualité d'un vrai modèle, ni qu'un modèle suit toutes les instructions, ni de la
  résistance aux attaques en général.
- Un **budget d'appels** borne des appels, pas toutes les ressources qu'un outil pourrait
  utiliser ; un **délai** n'annule pas les effets déjà produits et n'arrête pas un corps qui ignore
  son annulation.

## Auto-vérification"""
FR["705af204"] = """## Explorer

Exécutez `deadline` avec les deux agents et déplacez le curseur de délai de sa plus petite valeur
jusqu'à 5 s. Sur quelle ligne de la chronologie se trouve l'arrêt pour chaque valeur, et qu'est-ce
qui attendait encore quand le délai a expiré ? Baissez ensuite le curseur des appels modèle d'un
cran à la fois : à partir de quelle valeur une autre limite que le délai décide-t-elle, et pourquoi
le délai ne peut-il plus jouer aucun rôle ? Le panneau s'exécute avec exactement les limites
qu'affichent ses curseurs. Prédisez ensuite un script mystère avec le panneau ci-dessous."""
FR["questions"] = """## Questions

**1.** Pourquoi l'identifiant d'opération doit-il être dérivé de l'identifiant de requête de
l'appelant, plutôt que généré à neuf par l'hôte à chaque exécution ?

<details><summary>Réponse</summary>

Un rejeu doit retrouver la même opération. Un identifiant généré à neuf à chaque exécution change
après un redémarrage : le registre verrait une nouvelle opération et écrirait l'effet une seconde
fois, soit exactement la double écriture qu'il existe pour empêcher. Dérivé de l'identifiant de
requête de l'appelant (et de la signature de l'appel), l'identifiant est le même chaque fois que la
même requête revient.

</details>

**2.** Où exactement un plantage pourrait-il faire partir un e-mail deux fois, si l'e-mail était
envoyé depuis l'effet ?

<details><summary>Réponse</summary>

Après l'envoi de l'e-mail et avant la validation de la transaction qui marque l'opération comme
appliquée. Le rejeu trouve alors l'opération décidée mais pas appliquée, et envoie de nouveau. La
transaction SQLite ne peut pas inclure le serveur de messagerie ; la solution est de l'autre côté :
envoyer l'identifiant d'opération comme clé d'idempotence, que le service de messagerie utilise pour
dédoublonner (ou une boîte d'envoi, une *outbox*, lue par un seul expéditeur qui enregistre ce
qu'il a envoyé).

</details>

**3.** Un rejeu trouve une opération *rejetée*. Que doit faire l'hôte, et pourquoi ne pas décider
de nouveau ?

<details><summary>Réponse</summary>

Rapporter le rejet enregistré et sa raison, et ne rien écrire. La décision fait partie de
l'historique de l'opération : décider de nouveau pourrait donner une autre réponse (une politique
a changé, une personne a changé d'avis), et la même requête aurait alors deux décisions
contradictoires. Une nouvelle décision demande une nouvelle requête, donc un nouvel identifiant
d'opération.

</details>

**4.** Pourquoi l'appelant l'emporte-t-il sur un arrêt enregistré au même instant ? Que pourrait-il
mal se passer si l'appelant recevait plutôt l'issue `RepeatedCall` ?

<details><summary>Réponse</summary>

L'appelant a demandé à ne plus attendre ; il n'est plus là pour agir sur un statut, et le code qui
l'entoure (un arrêt du service, un Ctrl+C de l'utilisateur) compte sur le retour de son annulation
pour pouvoir remonter proprement. Lui remettre une issue à la place avalerait l'annulation : la
tâche semblerait s'être terminée normalement, le code englobant continuerait comme si rien n'avait
été demandé, et la console sortirait avec le code 2 au lieu de 130.

</details>"""
FR["key-points"] = """## Points clés

- L'annulation de l'appelant se propage sous la forme de `CancelledError` (code de sortie 130) et
  l'emporte sur un arrêt enregistré au même instant ; l'arrêt reste enregistré dans le périmètre
  d'exécution, mais l'appelant reçoit son annulation.
- Quand un fournisseur annule sa propre requête alors que personne n'a annulé l'exécution, celle-ci
  se termine en `ProviderUnavailable` : ce n'est jamais requalifié en `DeadlineExceeded`, ni présenté
  comme l'annulation de l'appelant.
- Un délai expiré donne le statut `DeadlineExceeded` ; il n'arrête pas un corps d'outil qui ignore
  son jeton : l'exécution rend la main, l'effet du corps arrive plus tard.
- Les compteurs du périmètre d'exécution repartent de zéro à chaque exécution : ils ne peuvent donc
  pas empêcher une écriture d'avoir lieu deux fois après un redémarrage.
- Une décision durable persiste d'abord un identifiant d'opération et une proposition immuable,
  enregistre la décision une seule fois, et écrit l'effet dans la transaction même qui le marque
  comme appliqué.
- Les bornes de la boucle, l'autorisation et l'idempotence durable couvrent chacune une défaillance
  différente.

**Pour aller plus loin**

- Lisez `labkit/durable.py` et `tests/test_durable.py` : trouvez l'endroit où le test tue le
  processus.
- Changez `request_id` dans la cellule durable et exécutez-la deux fois : combien de commentaires
  maintenant ?
- Ensuite : le chapitre 10, le projet final, vous fait écrire vous-même les modèles et une garde."""
FR["instructor"] = """## Notes pour l'enseignant

<details><summary>Idées reçues fréquentes et pistes de discussion</summary>

**Idées reçues fréquentes**

- « Une annulation est rapportée comme un statut, comme un délai. » L'annulation de l'appelant est
  relancée vers l'appelant (code de sortie 130 dans la console), et elle l'emporte même sur un arrêt
  enregistré au même instant.
- « Toute annulation pendant une exécution signifie que le délai a expiré » (ou « que l'appelant a
  abandonné »). Un fournisseur qui annule sa propre requête n'est ni l'un ni l'autre : l'exécution
  se termine en `ProviderUnavailable`, et la ligne `hint:` de la console dit que le fournisseur a
  annulé sa propre requête.
- « Le délai tue l'outil. » Python ne peut pas arrêter un thread ; un corps qui ignore son jeton
  s'exécute jusqu'au bout, et son effet se produit après le retour de l'exécution.
- « La règle de répétition de la boucle empêche une double écriture. » Elle vit dans un seul
  périmètre d'exécution ; un redémarrage crée un nouveau périmètre qui admet de nouveau le même
  appel.
- « Une base de données garantit gratuitement qu'un effet n'a lieu qu'une fois. » Seulement pour
  les effets écrits dans la même transaction ; un e-mail ou un appel HTTP a besoin de l'identifiant
  d'opération comme clé d'idempotence de l'autre côté.

**Pistes de discussion**

- Lesquels de vos propres effets de bord seraient nuisibles s'ils étaient rejoués après un
  plantage ?
- Où mettriez-vous l'identifiant d'opération si l'effet est un paiement passant par une API
  distante ?

</details>"""
